"""Scripted baseline agents: predictions for every task with no model (docs/baselines.md).

- `noop` (agent `baseline-noop`): the original code. The harness refuses an empty patch
  (`patch_rejected`: "the patch is empty"), so the prediction is a patch that appends one comment
  line to the task's entry script: the code the target runs is the original, statement for statement.
- `naive` (agent `baseline-naive`): a careless port, the same source transformation of every
  non-protected Python file of every task (gpu2tpu.agent.naive_port).
- `gold` (agent `baseline-gold`): the task's own migrations/gold (a patch, or an upstream recipe
  applied and diffed): the ceiling.

Every patch is a diff of the original tree against an edited copy (`diff_dirs`, what the harness
itself diffs a migrated directory with) and is checked against the task's protected paths before
it is written.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gpu2tpu.agent.naive_port import NaivePortError, naive_port
from gpu2tpu.errors import UserError
from gpu2tpu.record.workspace import PatchRejected, check_paths, touched_paths
from gpu2tpu.tasks.materialise import diff_dirs, migration_patch, original_tree
from gpu2tpu.tasks.spec import RunSpec

KINDS = ("noop", "naive", "gold")
AGENT_PREFIX = "baseline-"
MODEL = "none"  # no model: the name the metadata (examples/baselines.yaml) gives too
NOOP_COMMENT = "# gpu2tpu baseline-noop: this comment is the only change; the code runs as written"
_COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc")


class BaselineError(UserError):
    """A baseline prediction could not be made for a task (message names the task and why)."""


@dataclass
class Made:
    """One prediction line and what the transformation noticed on the way."""

    prediction: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def agent_name(kind: str) -> str:
    return AGENT_PREFIX + kind


def make_prediction(kind: str, spec: RunSpec) -> Made:
    """The `kind` baseline's prediction line for the task `spec`."""
    if kind not in KINDS:
        raise BaselineError(f"unknown baseline {kind!r}: choose one of {', '.join(KINDS)}")
    started = time.monotonic()
    notes: list[str] = []
    if kind == "gold":
        patch = migration_patch(spec, "gold")
    else:
        original = original_tree(spec)
        with tempfile.TemporaryDirectory(prefix=f"gpu2tpu-baseline-{spec.task_id}-") as tmp:
            work = Path(tmp) / "tree"
            shutil.copytree(original, work, symlinks=True, ignore=_COPY_IGNORE)
            changed = naive_edit(spec, work, notes) if kind == "naive" else []
            if not changed:  # nothing to port: the original code, as noop submits it
                if kind == "naive":
                    notes.append("no CUDA usage the naive port rewrites: submitted as noop does")
                append_comment(work / noop_file(spec, work), NOOP_COMMENT)
            patch = diff_dirs(original, work)
    try:
        check_paths(spec, touched_paths(patch))
    except PatchRejected as exc:
        whose = (f"its migrations/gold does not fit the task (fix {spec.migration_file('gold')})"
                 if kind == "gold" else "a gpu2tpu bug: report it")
        raise BaselineError(f"{spec.task_id}: the {kind} baseline's patch would be refused ({exc}); "
                            f"{whose}") from exc
    line = {"schema_version": 1, "task_id": spec.task_id, "agent": agent_name(kind), "model": MODEL,
            "patch": patch, "claimed_success": kind != "noop", "agent_cost_usd": 0.0,
            "input_tokens": 0, "output_tokens": 0, "human_interventions": 0, "attempt": 1,
            "wall_time_s": round(time.monotonic() - started, 3)}
    return Made(line, notes)


def is_protected(spec: RunSpec, rel: str) -> bool:
    try:
        check_paths(spec, [rel])
    except PatchRejected:
        return True
    return False


def python_files(spec: RunSpec, tree: Path) -> list[str]:
    """Every non-protected regular .py file of the tree (relative POSIX paths, sorted)."""
    out = []
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        if path.is_file() and not path.is_symlink() and not is_protected(spec, rel):
            out.append(rel)
    return out


def naive_edit(spec: RunSpec, tree: Path, notes: list[str]) -> list[str]:
    """Port every non-protected Python file of `tree` in place; the files changed."""
    changed = []
    for rel in python_files(spec, tree):
        path = tree / rel
        data = path.read_bytes()
        try:
            ported = naive_port(data.decode("utf-8"))
        except UnicodeDecodeError:
            notes.append(f"{rel}: not UTF-8, left as it is")
            continue
        except NaivePortError as exc:
            notes.append(f"{rel}: {exc}")
            continue
        if ported.changed:
            path.write_bytes(ported.text.encode("utf-8"))
            changed.append(rel)
    return changed


def noop_file(spec: RunSpec, tree: Path) -> str:
    """The file noop's comment goes in: the command's script, else the first non-protected .py."""
    argv = list(spec.command)
    if argv and argv[0] in ("python", "python3"):
        argv = argv[1:]
    if argv and argv[0].endswith(".py"):
        rel = (PurePosixPath(spec.workdir or ".") / argv[0]).as_posix()
        rel = rel[2:] if rel.startswith("./") else rel
        if (tree / rel).is_file() and not (tree / rel).is_symlink() and not is_protected(spec, rel):
            return rel
    files = python_files(spec, tree)
    if not files:
        raise BaselineError(f"{spec.task_id}: no Python file outside the protected paths "
                            f"({', '.join(spec.protected)}) to hold noop's comment")
    return files[0]


def append_comment(path: Path, comment: str) -> None:
    """One comment line at the end of a file, in the file's own line ending."""
    data = path.read_bytes()
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    if data and not data.endswith(b"\n"):
        data += eol
    path.write_bytes(data + comment.encode() + eol)


def existing_keys(out: Path) -> set[tuple[str, str, int]]:
    """(agent, task, attempt) of every line already in `out` (unreadable lines are skipped)."""
    keys = set()
    for text in out.read_text(encoding="utf-8").splitlines() if out.is_file() else []:
        try:
            raw = json.loads(text)
            keys.add((str(raw["agent"]), str(raw["task_id"]), int(raw.get("attempt") or 1)))
        except (ValueError, KeyError, TypeError):
            continue
    return keys


@dataclass
class Outcome:
    written: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # "agent/task" -> why


def write_baselines(kinds: Iterable[str], specs: Iterable[RunSpec], out: Path, append: bool = False,
                    log: Callable[[str], None] = print) -> Outcome:
    """One line per task and kind into `out` (JSONL), each written as soon as it is made; a task that
    cannot be prepared here (an upstream source missing) is named in `failed`, the rest go on."""
    kinds, specs = list(dict.fromkeys(kinds)), list(specs)
    if out.exists() and out.stat().st_size and not append:
        raise BaselineError(f"{out} already has predictions; pass --append to add to it, or "
                            "name another --out")
    held = existing_keys(out) if append else set()
    clash = [f"{agent_name(k)}/{s.task_id}" for k in kinds for s in specs
             if (agent_name(k), s.task_id, 1) in held]
    if clash:
        raise BaselineError(f"{out} already holds {', '.join(clash[:5])}"
                            f"{' ...' if len(clash) > 5 else ''}: the harness refuses a repeated "
                            "(agent, task, attempt); name another --out or leave those tasks out")
    out.parent.mkdir(parents=True, exist_ok=True)
    outcome = Outcome()
    with out.open("a", encoding="utf-8") as f:
        for spec in specs:
            for kind in kinds:
                label = f"{agent_name(kind)}/{spec.task_id}"
                try:
                    made = make_prediction(kind, spec)
                except UserError as exc:
                    outcome.failed[label] = str(exc)
                    log(f"[baseline] {label}: skipped: {exc}")
                    continue
                f.write(json.dumps(made.prediction, ensure_ascii=False) + "\n")
                f.flush()
                outcome.written.append(made.prediction)
                files = len(touched_paths(made.prediction["patch"]))
                log(f"[baseline] {label}: {len(made.prediction['patch'])} patch chars, {files} file(s)"
                    + "".join(f"\n    note: {n}" for n in made.notes))
    return outcome
