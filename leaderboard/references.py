"""Published reference hashes: what a self-reported run's references must be, file for file.

A report names its reference by id. The directory is fixed by that id (`references/<id>`), and
every reference file the maintainers' own run of that id left must be listed with the same sha256.
Verified runs (re-executed by the maintainers) publish their references; self-reported runs are
checked against them, so references a submitter fabricated or edited never grade anything.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from gpu2tpu.leaderboard.rows import to_arrow
from gpu2tpu.leaderboard.runfiles import ReportFile, SubmissionRefused
from gpu2tpu.record.report import REFERENCES


def reference_files(report: ReportFile) -> tuple[str, dict[str, str]]:
    """(reference id, {path inside the reference directory: sha256}) as the report lists them."""
    ref = report.data.get("reference") or {}
    ref_id = str(ref.get("id") or "")
    if not ref_id or "/" in ref_id or ref_id in (".", ".."):
        raise SubmissionRefused(f"{report.path}: names no valid reference id ({ref_id!r})")
    expected_dir = f"{REFERENCES}/{ref_id}"
    if ref.get("dir") != expected_dir:
        raise SubmissionRefused(
            f"{report.path}: reference directory {ref.get('dir')!r} is not {expected_dir!r}; the "
            "reference directory is fixed by the reference id"
        )
    prefix = expected_dir + "/"
    listed = {k[len(prefix):]: v.lower() for k, v in report.file_hashes.items() if k.startswith(prefix)}
    return ref_id, listed


def required_files(task_id: str) -> set[str]:
    """Every file the criteria read from a reference directory of this task."""
    from gpu2tpu.errors import UserError
    from gpu2tpu.record.report import GOLD, RUN_FILES, seed_dir
    from gpu2tpu.tasks.finder import find_task

    try:
        spec = find_task(task_id)
    except UserError as exc:
        raise SubmissionRefused(f"task {task_id!r} is not in this corpus: {exc}") from exc
    dirs = [seed_dir(s) for s in spec.seeds] + [GOLD]
    return {f"{d}/{f}" for d in dirs for f in RUN_FILES}


def check_published(con: duckdb.DuckDBPyConnection, reports: list[ReportFile]) -> dict[str, str]:
    """Check each report's references; returns {report path: 'published' | 'unpublished'}.

    A reference id the maintainers published must match file for file. An id never published
    (a user's own store, a new runtime) is accepted for a self-reported run only when every file
    the criteria read is listed (so hash-checked): it is stored as `unpublished`."""
    cache: dict[str, dict[str, str]] = {}
    status: dict[str, str] = {}
    for report in reports:
        ref_id, listed = reference_files(report)
        if ref_id not in cache:
            rows = con.execute(
                "SELECT path, sha256 FROM reference_files WHERE reference_id = $id", {"id": ref_id}
            ).fetchall()
            cache[ref_id] = dict(rows)
        published = cache[ref_id]
        if not published:
            unlisted = sorted(required_files(str(report.data["task_id"])) - set(listed))
            if unlisted:
                raise SubmissionRefused(
                    f"{report.path}: reference file(s) {', '.join(unlisted[:3])} of {ref_id} are "
                    "not listed with a sha256; every reference file the criteria read is required"
                )
            status[str(report.path)] = "unpublished"
            continue
        status[str(report.path)] = "published"
        missing = sorted(set(published) - set(listed))
        if missing:
            raise SubmissionRefused(
                f"{report.path}: reference {ref_id} lacks published file(s) "
                f"{', '.join(missing[:3])}; every reference file is required"
            )
        differ = sorted(p for p, h in listed.items() if published.get(p) != h)
        if differ:
            raise SubmissionRefused(
                f"{report.path}: reference file(s) {', '.join(differ[:3])} of {ref_id} differ from "
                "the published reference (or were never published); use the published references"
            )
    return status


def publish(con: duckdb.DuckDBPyConnection, reports: list[ReportFile], now: dt.datetime) -> int:
    """Record the references of a verified (maintainer-executed) run; the first record stands."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for report in reports:
        if not report.data.get("reference"):
            continue  # an infra failure before references were attached
        ref_id, listed = reference_files(report)
        for path, sha in listed.items():
            rows[(ref_id, path)] = {"reference_id": ref_id, "path": path, "sha256": sha,
                                    "published_at": now}
    if not rows:
        return 0
    con.register("_new_refs", to_arrow("reference_files", list(rows.values())))
    try:
        con.execute("INSERT OR IGNORE INTO reference_files BY NAME SELECT * FROM _new_refs")
    finally:
        con.unregister("_new_refs")
    return len(rows)
