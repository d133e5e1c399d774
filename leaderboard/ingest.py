"""`gpu2tpu submit`: re-score a run from its traces and load it into the store in one transaction.

Order: read and check everything (files, hashes, versions, metadata, prices) and regrade every
evaluation *before* the store is opened for writing; then one transaction inserts the rows through
Arrow. Any refusal leaves the store untouched; a crash or kill before COMMIT leaves it as it was.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from gpu2tpu.harness import node_facts
from gpu2tpu.judge.regrade import regrade
from gpu2tpu.leaderboard import prices as price_table
from gpu2tpu.leaderboard.references import check_published
from gpu2tpu.leaderboard.references import publish as publish_references
from gpu2tpu.leaderboard.rows import CRITERIA, evaluation_row, evidence_rows, to_arrow
from gpu2tpu.leaderboard.runfiles import (
    ReportFile,
    SubmissionRefused,
    check_report,
    find_reports,
    load_entries,
)
from gpu2tpu.leaderboard.schema import ROLLUP_TABLES, StoreError, open_writable, rollup_select
from gpu2tpu.leaderboard.store import explain
from gpu2tpu.record.report import Report, ReportError, RunLayout

VERIFIED = "verified"  # re-executed by the maintainers from the submitted predictions
SELF_REPORTED = "self-reported"  # graded by the submitter; shown apart, never ranked by default


def regrade_graded(report_path: Path, report: Report | None = None) -> dict[str, Any]:
    """Verdict, candidate and execution figures from the harness's criteria over the verified
    files (the only call into the harness). `report` is the one runfiles already verified."""
    try:
        if report is None:
            report = Report.load(report_path)
            return dict(regrade(report, report_path))
        return dict(regrade(report, report_path, verified=True))
    except ReportError as exc:
        raise SubmissionRefused(str(exc)) from exc  # the harness's message names the file


@dataclass
class SubmitResult:
    submission_id: str | None  # None when nothing new was written
    inserted: int
    skipped: int
    verdict_changed: int
    ignored_agents: list[str]
    db: Path
    submission_ids: list[str] = field(default_factory=list)
    trust: str = SELF_REPORTED

    def message(self) -> str:
        if self.submission_id is None:
            return f"already in {self.db}: all {self.skipped} evaluations were submitted before"
        text = (
            f"submitted {self.inserted} evaluations ({self.trust}) as "
            f"{', '.join(s[:12] for s in self.submission_ids or [self.submission_id])} to {self.db}"
            f" ({self.skipped} already present)"
        )
        if self.verdict_changed:
            text += f"; {self.verdict_changed} report.json verdicts differed from the re-score"
        if self.ignored_agents:
            text += f"; ignored reports of other agents: {', '.join(self.ignored_agents)}"
        return text


def submit(run_dir: Path, metadata_path: Path, db: Path, *, trust: str = SELF_REPORTED) -> SubmitResult:
    """Check, re-score and ingest `run_dir`: one submission per agent entry of `metadata_path`.

    A run directory a submitter graded is `self-reported`: its references must be the published
    ones. `trust="verified"` is only for runs the maintainers executed themselves (`leaderboard
    verify`); their references become the published ones."""
    from gpu2tpu import KNOWN_HARNESS_VERSIONS

    run_dir = RunLayout(run_dir).root.resolve()  # relative, ~, symlinks: one real spelling
    entries = load_entries(Path(metadata_path).expanduser())
    known_revisions = price_table.known_corpus_revisions()
    reports = [
        check_report(run_dir, p, tuple(KNOWN_HARNESS_VERSIONS), known_revisions,
                     require_evidence=trust == VERIFIED)
        for p in find_reports(run_dir)
    ]
    agents = {str(e["agent"]) for e in entries}
    ignored = sorted({str(r.data["agent"]) for r in reports} - agents)
    prices = price_table.load_prices()
    price_version = price_table.latest_version(prices)
    now = dt.datetime.now(dt.timezone.utc)
    batches = []
    for metadata in entries:
        ours = [r for r in reports if r.data["agent"] == metadata["agent"]]
        if not ours:
            raise SubmissionRefused(
                f"no report in {run_dir.name} is by agent {metadata['agent']!r} named in "
                f"{Path(metadata_path).name} (found: {', '.join(sorted({r.data['agent'] for r in reports}))})"
            )
        batches.append(_batch(run_dir, ours, metadata, prices, price_version, trust, now))
    try:  # waits (bounded, announced) for another writer or a reader: store.connect
        con = open_writable(db)
    except StoreError as exc:  # one line: busy, damaged, unwritable, newer schema
        raise SubmissionRefused(str(exc)) from None
    try:
        used = [r for r in reports if r.data["agent"] in agents and r.data.get("reference")]
        if trust == VERIFIED:
            _set_reference_status(batches, {str(r.path): "maintainer" for r in used})
            return _write(con, db, batches, prices, ignored, now, publish=used)
        _set_reference_status(batches, check_published(con, used))
        return _write(con, db, batches, prices, ignored, now, publish=[])
    except duckdb.Error as exc:  # a damaged block DuckDB's checksum caught, a full disk, ...
        raise SubmissionRefused(str(explain(exc, db, writing=True))) from None
    finally:
        con.close()


def _set_reference_status(batches: list[_Batch], status: dict[str, str]) -> None:
    for batch in batches:
        for row in batch.eval_rows:
            row["reference_status"] = status.get(row.pop("_report_path"))


@dataclass
class _Batch:
    submission: dict[str, Any]
    eval_rows: list[dict[str, Any]]
    ev_rows: list[dict[str, Any]]


def _batch(
    run_dir: Path,
    ours: list[ReportFile],
    metadata: dict[str, Any],
    prices: list[price_table.Price],
    price_version: str,
    trust: str,
    now: dt.datetime,
) -> _Batch:
    agent = str(metadata["agent"])
    _check_consistent(ours, metadata, Path("metadata"))
    eval_rows: list[dict[str, Any]] = []
    ev_rows: list[dict[str, Any]] = []
    for report in ours:
        graded = regrade_graded(report.path, report.report)
        _check_verdict(graded["verdict"], report.path)
        price = _price_for(report, graded, prices, price_version)
        row = evaluation_row(report, graded, metadata, price, trust)
        row["_report_path"] = str(report.path)
        eval_rows.append(row)
        ev_rows.extend(evidence_rows(row["evaluation_id"], graded["verdict"]))
    _check_unique(eval_rows)
    first = ours[0].data
    predictions_hash = _sha(sorted([r["task_id"], r["attempt"], r["prediction_hash"]] for r in eval_rows))
    submission_id = _sha([first["run_id"], agent, trust, sorted(r["evaluation_id"] for r in eval_rows)])
    submission = {
        "submission_id": submission_id,
        "run_id": first["run_id"],
        "agent": agent,
        "model": metadata.get("model"),
        "organisation": metadata["organisation"],
        "submitted_at": now,
        "run_created_at": min((r["created_at"] for r in eval_rows if r["created_at"]), default=None),
        "harness_version": first["harness_version"],
        "corpus_revision": first["corpus_revision"],
        "predictions_hash": predictions_hash,
        "n_evaluations": 0,
        "n_verdict_changed": 0,
        "metadata": json.dumps(metadata, sort_keys=True),
        "source_path": None,  # local paths are never stored: the store is published
        "trust": trust,
    }
    return _Batch(submission, eval_rows, ev_rows)


def _write(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    batches: list[_Batch],
    prices: list[price_table.Price],
    ignored: list[str],
    now: dt.datetime,
    publish: list[ReportFile],
) -> SubmitResult:
    con.execute("BEGIN TRANSACTION")
    try:
        ids = [r["evaluation_id"] for b in batches for r in b.eval_rows]
        present = {
            row[0]
            for row in con.execute(
                "SELECT evaluation_id FROM evaluations WHERE list_contains($ids, evaluation_id)",
                {"ids": ids},
            ).fetchall()
        }
        publish_references(con, publish, now)
        written: list[str] = []
        all_new: list[dict[str, Any]] = []
        changed = 0
        for batch in batches:
            new_rows = [r for r in batch.eval_rows if r["evaluation_id"] not in present]
            if not new_rows:
                continue
            submission = batch.submission
            new_ids = {r["evaluation_id"] for r in new_rows}
            for row in new_rows:
                row["submission_id"] = submission["submission_id"]
            submission["n_evaluations"] = len(new_rows)
            submission["n_verdict_changed"] = sum(bool(r["verdict_changed"]) for r in new_rows)
            changed += submission["n_verdict_changed"]
            _insert(con, "submissions", to_arrow("submissions", [submission]))
            _insert(con, "evaluations", to_arrow("evaluations", new_rows))
            _insert_evidence(con, [r for r in batch.ev_rows if r["evaluation_id"] in new_ids])
            written.append(submission["submission_id"])
            all_new.extend(new_rows)
        if not all_new and not publish:
            con.execute("ROLLBACK")
            return SubmitResult(None, 0, len(present), 0, ignored, db)
        if all_new:
            refresh_rollups(con, all_new)
            _upsert_tasks(con, all_new, now)
            price_table.sync_prices(con, prices)
        con.execute("COMMIT")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass  # a failed COMMIT has rolled back already; report the first error
        raise
    return SubmitResult(
        written[0] if written else None, len(all_new), len(present), changed, ignored, db,
        submission_ids=written, trust=batches[0].submission["trust"],
    )


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """Bulk insert through Arrow, matching columns by name."""
    name = f"_new_{table}"
    con.register(name, rows)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}")
    finally:
        con.unregister(name)


def refresh_rollups(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """Recompute every rollup (all trusts) for the (agent, model) pairs these rows belong to."""
    keys = sorted({(r["agent"], r["model"]) for r in rows}, key=str)
    con.register(
        "_keys",
        pa.table(
            {
                "agent": pa.array([k[0] for k in keys], pa.string()),
                "model": pa.array([k[1] for k in keys], pa.string()),
            }
        ),
    )
    match = "{t}.agent = k.agent AND {t}.model IS NOT DISTINCT FROM k.model"
    try:
        # One scan of evaluations for the affected pairs, then every rollup from that subset.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _affected AS SELECT e.* FROM evaluations e "
            f"SEMI JOIN _keys k ON {match.format(t='e')}"
        )
        for table in ROLLUP_TABLES:
            con.execute(f"DELETE FROM {table} s USING _keys k WHERE {match.format(t='s')}")
            con.execute(f"INSERT INTO {table} BY NAME {rollup_select(table, '_affected')}")
        con.execute("DROP TABLE _affected")
    finally:
        con.unregister("_keys")


def _insert_evidence(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        _insert(con, "evidence", to_arrow("evidence", rows))


def _upsert_tasks(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], now: dt.datetime):
    """The installed tasks (replacing), then any task only known from reports."""
    from gpu2tpu.tasks import finder

    tasks: dict[str, dict[str, Any]] = {}
    for spec in finder.installed_specs():
        tasks[spec.task_id] = {
            "task_id": spec.task_id,
            "title": spec.title,
            "task_hash": spec.content_hash,
            "target_chips": spec.target_chips,
            "precision_policy": spec.precision_policy,
            "steps": spec.steps,
            "source": "corpus",
            "updated_at": now,
        }
    if tasks:
        _insert_tasks(con, list(tasks.values()), replace=True)
    reported = {
        r["task_id"]: {
            "task_id": r["task_id"],
            "task_hash": r["task_hash"],
            "source": "report",
            "updated_at": now,
        }
        for r in rows
        if r["task_id"] not in tasks
    }
    if reported:
        _insert_tasks(con, list(reported.values()), replace=False)


def _insert_tasks(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], replace: bool):
    con.register("_new_tasks", to_arrow("tasks", rows))
    try:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        con.execute(f"{verb} INTO tasks BY NAME SELECT * FROM _new_tasks")
    finally:
        con.unregister("_new_tasks")


def _check_consistent(reports: list[ReportFile], metadata: dict[str, Any], source: Path) -> None:
    run_ids = {r.data["run_id"] for r in reports}
    if len(run_ids) > 1:
        raise SubmissionRefused(f"reports belong to several runs ({', '.join(sorted(run_ids))})")
    for key in ("harness_version", "corpus_revision"):
        values = {str(r.data[key]) for r in reports}
        if len(values) > 1:
            raise SubmissionRefused(f"reports of one run disagree on {key}: {sorted(values)}")
    for r in reports:
        model = r.data.get("model")
        if model and model != metadata["model"]:
            raise SubmissionRefused(
                f"{r.path} was produced with model {model!r} but {source} says "
                f"{metadata['model']!r}; fix the metadata"
            )


def _check_verdict(verdict: dict[str, Any], path: Path) -> None:
    criteria = verdict.get("criteria")
    if not isinstance(criteria, dict) or any(c not in criteria for c in CRITERIA):
        raise SubmissionRefused(f"regrade of {path} returned a verdict without all five criteria")


def _check_unique(rows: list[dict[str, Any]]) -> None:
    seen: set[tuple[str, int]] = set()
    for row in rows:
        key = (row["task_id"], row["attempt"])
        if key in seen:
            raise SubmissionRefused(f"two reports for task {key[0]} attempt {key[1]} in one run")
        seen.add(key)


def _price_for(
    report: ReportFile, graded: dict[str, Any], prices: list[price_table.Price], version: str
) -> price_table.Price | None:
    execution = graded.get("execution") or {}
    chip_seconds = execution.get("chip_seconds")
    target = execution.get("target")
    if not chip_seconds:
        return None  # nothing ran (e.g. patch rejected): no execution cost to price
    if not target:
        raise SubmissionRefused(f"{report.path}: execution used chip time but names no target")
    node = node_facts.read(report.path.parent) or {}
    try:
        return price_table.lookup_run(str(target), node.get("accelerator"), prices, version)
    except price_table.UnknownPrice as exc:
        raise SubmissionRefused(f"{report.path}: {exc.args[0]}") from exc


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
