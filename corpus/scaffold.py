"""`gpu2tpu tasks new OWNER__NAME`: start an upstream task from a corpus project.

Writes DIR/OWNER__NAME/ with task.yaml (the pinned source, verified as `tasks pin` verifies it;
the training command, working directory and title from the corpus record; every field a
measurement must fill marked `FILL`), prepare.py and evaluate.py skeletons on the task kit, and a
gold recipe skeleton. The author then fills them in and runs `gpu2tpu validate --tasks ID
--task-dir DIR` (docs/upstream-tasks.md walks the loop).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus.pin import Pinned, pin_source, record
from gpu2tpu.errors import UserError
from gpu2tpu.tasks.spec import FILL


def command_parts(train_command: str | None) -> tuple[str, list[str], list[str]]:
    """(workdir, command, notes) from a corpus record's training command: `cd DIR && python X ARGS`
    becomes workdir DIR and [X, ARGS...]; anything else is kept as a note to resolve by hand."""
    notes: list[str] = []
    if not train_command:
        return "", [FILL], ["the corpus record has no training command: write `command` by hand"]
    parts = [p.strip() for p in train_command.split("&&")]
    workdir = ""
    if len(parts) > 1 and parts[0].startswith("cd "):
        workdir = parts[0][3:].strip().strip("/")
        parts = parts[1:]
    if len(parts) > 1:
        notes.append(f"the record chains {len(parts)} commands ({train_command!r}): the task runs one")
    try:
        argv = shlex.split(parts[0])
    except ValueError:
        return workdir, [FILL], [f"cannot split the training command {train_command!r}"]
    if argv and argv[0] in ("python", "python3"):
        argv = argv[1:]
    elif argv:
        notes.append(f"the command starts with {argv[0]!r}, not python: the harness runs a Python "
                     "script; point `command` at the script the shell command ends up running")
    if argv[:1] == ["-m"]:
        notes.append("`python -m` launchers (torch.distributed.launch) are not run: use the script")
    if any("<" in a for a in argv):
        notes.append("the command has placeholders (<...>): replace them with stand-in paths")
    return workdir, argv or [FILL], notes


def task_yaml(pinned: Pinned, rec: dict[str, Any] | None) -> str:
    cur = (rec or {}).get("curated") or {}
    workdir, command, notes = command_parts(cur.get("train_command"))
    title = cur.get("paper_title") or pinned.pin.repo
    what = ", ".join(str(x) for x in [cur.get("task"), *(cur.get("datasets") or [])] if x)
    body = {
        "schema_version": 1, "task_id": pinned.pin.id, "kind": "upstream",
        "title": f"{title}{f' ({what})' if what else ''}",
        "description": (f"Migrate {pinned.pin.repo} to run on a TPU with PyTorch/XLA. Keep the training "
                        "configuration and the model unchanged. Training must run on the XLA device "
                        "without CPU fallbacks, per-step host synchronisation or recompilation."),
        "source": {"repo": pinned.pin.repo, "commit": pinned.pin.commit, "tree": pinned.pin.tree},
        "workdir": workdir, "command": command,
        "reference_args": {"cpu": [], "cuda": []},
        "seed": 0, "seed_arg": FILL, "harness_seed": FILL, "reference_seeds": [1, 2],
        "steps": FILL, "target_chips": 1, "precision_policy": "fp32",
        "prepare": {"outputs": [FILL]}, "protected": [], "checkpoint": None,
        "goal": {"metric": FILL, "higher_is_better": True, "tolerance": FILL},
        "fallback_allowlist": [], "timeout_s": 300, "hazards": [],
    }
    head = [f"# Scaffolded by `gpu2tpu tasks new` from corpus/projects/{pinned.pin.id}.yaml.",
            "# Fill every FILL (docs/upstream-tasks.md lists each field with its unit), then run",
            f"#   gpu2tpu validate --tasks {pinned.pin.id} --task-dir <the folder holding this one>",
            *(f"# NOTE: {n}" for n in [*notes, *pinned.notes])]
    return "\n".join(head) + "\n" + yaml.safe_dump(body, sort_keys=False, width=100)


PREPARE = '''"""Stand-in data for {repo}: FILL what the project's loader reads, in its format.

Deterministic (fixed seeds); numpy and the standard library only. Every path written here is
listed in task.yaml's prepare.outputs (and so protected from the migration).
"""

from __future__ import annotations

from pathlib import Path

from task_kit import prepare_main


def write(root: Path) -> None:
    raise NotImplementedError("FILL: write the stand-in data under root")


if __name__ == "__main__":
    prepare_main(write, "{repo}")
'''

EVALUATE = '''"""Goal metric for {repo}: FILL which metric, on which held-out data.

The model is built from the pristine, prepared project (on sys.path) and loaded from the trained
checkpoint; the harness writes goal.json from the value returned.
"""

from __future__ import annotations

from task_kit import Checkpoint, GoalUnavailable, evaluate_goal


def measure(ckpt: Checkpoint) -> float:
    state = ckpt.state()  # weights_only, `module.` prefixes removed
    if not state:
        raise GoalUnavailable("the checkpoint is empty")
    raise NotImplementedError("FILL: build the model, load `state`, return the metric")


if __name__ == "__main__":
    evaluate_goal("FILL", measure)
'''

GOLD = '''"""Gold migration of {repo} to PyTorch/XLA: FILL what it changes and why.

Each edit is anchored on one line of the verified tree that occurs exactly once (tasks/recipe.py).
Broken recipes in broken/ build on it with `r.gold` or `r.apply_gold(without=[(file, anchor)])`.
"""


def apply(r):
    raise NotImplementedError("FILL: r.replace(FILE, ANCHOR, NEW), r.insert_after(...), ...")
'''


def scaffold_task(what: str, dest_root: Path, sources: Path | None = None,
                  commit: str | None = None, repo: str | None = None) -> Path:
    """Write dest_root/<id>/ for a corpus project (or a local git repository); returns it."""
    pinned = pin_source(what, sources, commit, repo)
    dest = Path(dest_root).expanduser() / pinned.pin.id
    if dest.exists():
        raise UserError(f"{dest} already exists: choose another --dir, or remove it first")
    rec = record(pinned.pin.id)
    if rec is None:
        pinned.notes.append(f"{pinned.pin.id} has no corpus record: title and command are guesses")
    (dest / "migrations" / "broken").mkdir(parents=True)
    (dest / "migrations" / "alternatives").mkdir()
    (dest / "task.yaml").write_text(task_yaml(pinned, rec))
    (dest / "prepare.py").write_text(PREPARE.format(repo=pinned.pin.repo))
    (dest / "evaluate.py").write_text(EVALUATE.format(repo=pinned.pin.repo))
    (dest / "migrations" / "gold.py").write_text(GOLD.format(repo=pinned.pin.repo))
    return dest
