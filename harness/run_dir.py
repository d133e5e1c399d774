"""One run directory, many writers: summary.json derived from the reports on disk, and locks.

summary.json lists every evaluation whose report.json is in the run directory (record/report.py
`RunLayout.saved_reports`), whichever `evaluate` graded it: it is rewritten from the disk, under an
exclusive lock on the run directory (fcntl), and replaced atomically, so successive and concurrent
evaluates into one run id merge and an interrupted one still leaves a summary `report` reads. An
evaluation being graded holds a lock of its own, so two evaluates that share a prediction grade it
once: the second waits, then reuses the first's report by its cache key (harness/evaluate.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpu2tpu import __version__
from gpu2tpu.corpus import revision
from gpu2tpu.record.report import REPORT, SCHEMA_VERSION, Report, ReportError, RunLayout, read_json

LOCKS = ".locks"  # per-evaluation lock files, inside the run directory (no report.json below)
STAGING = ".incoming"  # the Ray engine's folder for an evaluation on its way in (harness/ray_engine.py)


@contextmanager
def run_lock(layout: RunLayout) -> Iterator[None]:
    """Exclusive lock on the run directory itself (released when the process ends, however)."""
    layout.root.mkdir(parents=True, exist_ok=True)
    fd = os.open(layout.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextmanager
def evaluation_lock(layout: RunLayout, label: str, log: Callable[[str], None]) -> Iterator[None]:
    """Exclusive lock on one evaluation (`agent/task[.n]`) of the run; says so when it waits."""
    folder = layout.root / LOCKS
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(label.encode()).hexdigest()[:32] + ".lock"
    with open(folder / name, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"{label}: another `gpu2tpu evaluate` is grading it in {layout.root}; waiting for it "
                "(its report is reused when it graded the same prediction)")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def evaluation_reports(layout: RunLayout) -> list[str]:
    """Run-relative paths of every evaluation's report.json (`agent/task[.n]/report.json`), sorted;
    references and folders on their way in are left out."""
    out = []
    for path in layout.saved_reports():
        rel = path.relative_to(layout.root)
        if len(rel.parts) == 3 and not rel.parts[1].endswith(STAGING) and not rel.parts[0].startswith("."):
            out.append(rel.as_posix())
    return sorted(out)


def _counts(layout: RunLayout, evaluations: list[str]) -> dict[str, dict[str, int]]:
    """Migrated / total per agent; a report that does not load counts as not migrated."""
    counts: dict[str, dict[str, int]] = {}
    for rel in evaluations:
        try:
            report = Report.load(layout.root / rel)
            agent, migrated = report.agent, bool(report.verdict.get("migrated"))
        except ReportError:
            agent, migrated = rel.split("/", 1)[0], False
        c = counts.setdefault(agent, {"migrated": 0, "total": 0})
        c["total"] += 1
        c["migrated"] += int(migrated)
    return counts


def refresh_summary(layout: RunLayout, errors: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Rewrite summary.json from the reports on disk, under the run directory's lock, and return
    it. `errors` (predictions not graded) are added to those it already records."""
    with run_lock(layout):
        try:
            earlier = read_json(layout.summary).get("errors") if layout.summary.is_file() else []
        except ReportError:
            earlier = []
        evaluations = evaluation_reports(layout)
        summary = {"schema_version": SCHEMA_VERSION, "run_id": layout.run_id,
                   "harness_version": __version__, "corpus_revision": revision(),
                   "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   "evaluations": evaluations,
                   "counts": _counts(layout, evaluations),
                   "errors": list(dict.fromkeys([*(earlier if isinstance(earlier, list) else []),
                                                 *errors]))}
        fd, tmp = tempfile.mkstemp(prefix=".summary.", suffix=".tmp", dir=layout.root)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
            os.replace(tmp, layout.summary)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return summary


def write_summary(layout: RunLayout, reports: list[Report], errors: list[str]) -> dict[str, Any]:
    """Refresh summary.json (every evaluation on disk) and return this invocation's part of it:
    the same fields, with the evaluations, counts and errors of `reports` and `errors` alone."""
    summary = refresh_summary(layout, errors)
    counts: dict[str, dict[str, int]] = {}
    for r in reports:
        c = counts.setdefault(r.agent, {"migrated": 0, "total": 0})
        c["total"] += 1
        c["migrated"] += int(bool(r.verdict.get("migrated")))
    return {**summary, "evaluations": sorted(f"{r.label}/{REPORT}" for r in reports),
            "counts": counts, "errors": list(errors)}
