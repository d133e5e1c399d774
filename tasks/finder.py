"""Where tasks are found: the package's task directories, then those added with `--task-dir`
(kept in GPU2TPU_TASK_DIRS so child processes see them)."""

from __future__ import annotations

import os
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.tasks import TASKS_DIR
from gpu2tpu.tasks.spec import RunSpec, load_spec, read_task_yaml

TASK_DIRS_ENV = "GPU2TPU_TASK_DIRS"  # extra task directories (os.pathsep-separated), see add_task_dirs


def add_task_dirs(dirs: list[Path]) -> None:
    """Make task directories outside the package findable (`--task-dir`): each is a task directory
    (has task.yaml) or a folder of them. Kept in the environment so child processes see them; the
    given ones come first, so a task they hold wins over one of the same id already listed there."""
    given = []
    for d in dirs:
        path = Path(d).expanduser().resolve()
        if not path.is_dir():
            raise UserError(f"--task-dir {d}: no such directory")
        if not (path / "task.yaml").is_file() and not any(path.glob("*/task.yaml")):
            raise UserError(f"--task-dir {d}: neither a task directory (task.yaml) nor a folder of them")
        if str(path) not in given:
            given.append(str(path))
    known = [d for d in os.environ.get(TASK_DIRS_ENV, "").split(os.pathsep) if d and d not in given]
    os.environ[TASK_DIRS_ENV] = os.pathsep.join(given + known)


def _task_homes() -> dict[str, Path]:
    """task id -> task directory, over the extra task directories (first wins) then the package's."""
    homes: dict[str, Path] = {}
    for entry in [d for d in os.environ.get(TASK_DIRS_ENV, "").split(os.pathsep) if d]:
        path = Path(entry)
        if (path / "task.yaml").is_file():
            candidates = [path]
        else:
            candidates = sorted(path.iterdir()) if path.is_dir() else []
        for task_dir in candidates:
            if (task_dir / "task.yaml").is_file():
                task_id = str(read_task_yaml(task_dir).get("task_id") or task_dir.name)
                homes.setdefault(task_id, task_dir)
    return homes
def list_tasks(tasks_dir: Path = TASKS_DIR, kind: str | None = None) -> list[str]:
    """Task ids found, sorted; with `kind` ("practice" or "upstream") only those of that kind."""
    found = set(_task_homes()) if tasks_dir == TASKS_DIR else set()
    if tasks_dir.is_dir():
        found |= {p.name for p in tasks_dir.iterdir() if (p / "task.yaml").exists()}
    ids = sorted(found)
    return ids if kind is None else [t for t in ids if find_task(t, tasks_dir).kind == kind]


def find_task(task_id: str, tasks_dir: Path = TASKS_DIR) -> RunSpec:
    task_dir = _task_homes().get(task_id) if tasks_dir == TASKS_DIR else None
    task_dir = task_dir or tasks_dir / task_id
    if not (task_dir / "task.yaml").exists():
        known = ", ".join(list_tasks(tasks_dir)) or "none"
        raise UserError(f"unknown task {task_id!r} in {tasks_dir} (known: {known}); "
                        "`gpu2tpu tasks` lists the tasks, `--task-dir DIR` adds task directories")
    return load_spec(task_dir)


def installed_specs() -> list[RunSpec]:
    """Every task the finder sees (the package's and the `--task-dir` ones), loaded."""
    return [find_task(t, TASKS_DIR) for t in list_tasks(TASKS_DIR)]
