"""The gpu2tpu tasks: the one reader of task.yaml and of the labels, the task finder, pinned
sources, recipes, materialising and the `gpu2tpu tasks` command, with the task directories beside
them (`tasks/<task_id>/task.yaml`). The corpus and the leaderboard read tasks only through here;
this package imports neither."""

from __future__ import annotations

from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent  # the shipped task directories: <task_id>/task.yaml
# copied beside evaluate.py and prepare.py (as task_kit.py) whenever the harness runs them
TASK_KIT = TASKS_DIR / "task_kit.py"
KIT_NAME = "task_kit.py"  # reserved: a task's own file of that name is replaced by the kit
