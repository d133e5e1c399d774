"""What CI grades of the upstream tasks: what a change can affect, not the task set (issue 44;
lm-evaluation-harness tests only the task folders a change touched, and a release runs them all).

- the whole labelled suite of each task whose own files changed since its `validated.json`, or
  that was never validated;
- the gold of each task whose record lapsed because grading code or the runtime changed (that
  change is validated by `gpu2tpu validate --all`, which writes the records again);
- the gold of a few tasks whose record holds, a different few for each commit: a spot check that
  a clean machine still builds their references and grades their gold as recorded.

`GPU2TPU_CI_GOLDS=all` grades every task's gold (what CI did up to 35 tasks)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from gpu2tpu.harness import validated
from gpu2tpu.tasks.finder import find_task

ALL_GOLDS_ENV = "GPU2TPU_CI_GOLDS"
SPOT_CHECKS = 4  # holding tasks whose gold a CI run grades besides


def commit_key(repo: Path | None = None) -> str:
    """The checked-out commit (the spot checks rotate with it), or "" outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo or Path(__file__).parent,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def spot_checks(holding: list[str], key: str, count: int = SPOT_CHECKS) -> list[str]:
    """`count` of the holding tasks, chosen by a hash of `key` and each id: the same commit picks
    the same tasks, and over commits every task is picked."""
    def rank(task_id: str) -> str:
        return hashlib.sha256(f"{key}\0{task_id}".encode()).hexdigest()
    return sorted(sorted(holding, key=rank)[:count])


def ci_plan(task_ids: list[str], key: str | None = None) -> tuple[frozenset[str], dict[str, str],
                                                                   dict[str, str]]:
    """(tasks graded gold only, whole suites with why, lapsed records with why). Tasks in neither
    of the first two are not graded."""
    why = {t: validated.changed(find_task(t)) for t in task_ids}
    own = {t: w for t, w in why.items() if w and (w == "never validated" or w.startswith("the task's"))}
    lapsed = {t: w for t, w in why.items() if w and t not in own}
    holding = [t for t, w in why.items() if not w]
    if os.environ.get(ALL_GOLDS_ENV, "").lower() == "all":
        spot = holding
    else:
        spot = spot_checks(holding, commit_key() if key is None else key)
    return frozenset(lapsed) | frozenset(spot), own, lapsed
