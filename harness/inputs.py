"""What `evaluate`, `validate` and `demo` are asked to do, checked before anything runs.

Each refusal is a UserError (one line, exit status 2) that names what is wrong and what to change:
a run id that is no plain name, worker or timeout counts that cannot work, and the whole
predictions file (every bad line named at once, an empty file, a `--tasks` naming no task, a
selection that leaves nothing to grade, a `migrated_dir` that is not there). A prediction that
parses but fails later (its patch does not apply, its tree holds a link that leaves it) is the
agent's `patch_rejected`; these are the submitter's input, refused before any compute.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.harness.predictions import Prediction, read_predictions
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.spec import RunSpec

_RUN_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")
FORMATS = "docs/formats.md describes a prediction line"


def check_run_id(run_id: str, runs_flag: str = "--runs") -> str:
    """A run id names one folder inside `--runs`: letters, digits, '.', '_', '-', not starting
    with '.' (so no path, no escape, nothing a shell or a URL would read otherwise)."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise UserError(f"--run-id {run_id!r}: give a plain name of letters, digits, '.', '_' and '-' "
                        f"(not starting with '.', at most 128): it names a folder inside {runs_flag}")
    return run_id


WORKERS_DEFAULT = 1  # every command's: one evaluation at a time unless asked for more


def add_workers_option(parser: argparse.ArgumentParser) -> None:
    """`--workers N`, the same on every command that grades (evaluate, validate, demo, leaderboard
    verify); check_workers checks the value when the command runs."""
    parser.add_argument("--workers", type=int, default=WORKERS_DEFAULT, metavar="N",
                        help="evaluations run at once on this machine (default "
                        f"{WORKERS_DEFAULT}; more finish sooner where cores are free)")


def check_workers(workers: int, flag: str = "--workers") -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UserError(f"{flag} {workers}: give 1 or more (how many evaluations run at once)")
    return workers


def check_timeout(timeout_s: float | None) -> float | None:
    if timeout_s is not None and not (math.isfinite(timeout_s) and timeout_s > 0):
        raise UserError(f"--timeout {timeout_s:g}: give a positive number of seconds (each run's time "
                        "limit), or leave it out for the task's own limit")
    return timeout_s


def check_request(run_id: str, workers: int = 1, timeout_s: float | None = None) -> None:
    """The counts and the run id of an evaluation request (the engines call it first)."""
    check_run_id(run_id)
    check_workers(workers)
    check_timeout(timeout_s)


@dataclass
class Selection:
    """The predictions to grade (in file order) and the task of each."""

    predictions: list[Prediction]
    specs: dict[str, RunSpec]


def select(path: Path, tasks: list[str] | None = None) -> Selection:
    """Read the whole predictions file and check it: every line well formed (else every bad line
    is named), at least one prediction, every `--tasks` id a known task, at least one prediction
    selected, and for each selected one a known task and a `migrated_dir` that is a directory."""
    path = Path(path).expanduser()
    preds, errors = read_predictions(path)
    if errors:
        raise UserError(_lines(f"{path}: {len(errors)} bad line(s), so nothing was run; fix them "
                               f"and run again ({FORMATS}):", errors))
    if not preds:
        raise UserError(f"{path} holds no predictions: write one JSON object per line ({FORMATS})")
    known = list_tasks()
    if tasks:
        unknown = [t for t in tasks if t not in known]
        if unknown:
            raise UserError(f"--tasks: unknown task(s) {', '.join(map(repr, unknown))}"
                            f"{_did_you_mean(unknown, known)}; known tasks: {', '.join(known)} "
                            "(`gpu2tpu tasks` lists them; --task-dir DIR adds a folder of tasks)")
        chosen = [p for p in preds if p.task_id in tasks]
        if not chosen:
            held = sorted({p.task_id for p in preds})
            raise UserError(f"--tasks {' '.join(tasks)} selects none of the {len(preds)} predictions "
                            f"in {path} (their tasks: {', '.join(held)}): name a task they hold, or "
                            "leave --tasks out")
        preds = chosen
    specs: dict[str, RunSpec] = {}
    problems: list[str] = []
    for pred in preds:
        where = f"{path}:line {pred.line}"
        if pred.task_id not in known:
            problems.append(f"{where}: unknown task {pred.task_id!r}{_did_you_mean([pred.task_id], known)}")
            continue
        if pred.task_id not in specs:
            try:
                specs[pred.task_id] = find_task(pred.task_id)
            except Exception as exc:  # a task folder that does not load: name the line and why
                problems.append(f"{where}: task {pred.task_id!r} does not load: {exc}")
                continue
        if pred.migrated_dir is not None and not Path(pred.migrated_dir).is_dir():
            what = "is not a directory" if Path(pred.migrated_dir).exists() else "does not exist"
            problems.append(f"{where}: migrated_dir {pred.migrated_dir} {what} (a relative path is "
                            f"taken from the predictions file's folder, {path.parent.resolve()})")
    if problems:
        tail = [f"known tasks: {', '.join(known)} (--task-dir DIR adds a folder of tasks)"] \
            if any(": unknown task " in p for p in problems) else []
        raise UserError(_lines(f"{path}: {len(problems)} prediction(s) cannot be graded, so nothing "
                               "was run; fix them and run again:", problems + tail))
    return Selection(preds, {t: specs[t] for t in dict.fromkeys(p.task_id for p in preds)})


def _lines(head: str, items: list[str]) -> str:
    return "\n".join([head, *(f"  {item}" for item in items)])


def _did_you_mean(names: list[str], known: list[str]) -> str:
    close = [m for n in names for m in difflib.get_close_matches(n, known, n=1)]
    return f" (did you mean {', '.join(dict.fromkeys(close))}?)" if close else ""
