"""Rows for the store, built from a checked report plus its *regraded* verdict, as Arrow tables.

Text the graded code or the submitter controls (evidence lines quote crash messages; report.json's
category and runtime) is stored only through safetext.public_text: no control characters, no
absolute host paths, capped."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from gpu2tpu.judge.criteria import CRITERION_NAMES
from gpu2tpu.leaderboard.safetext import public_json, public_text

if TYPE_CHECKING:
    from gpu2tpu.leaderboard.prices import Price
    from gpu2tpu.leaderboard.runfiles import ReportFile

CRITERIA = CRITERION_NAMES  # the registry in gpu2tpu.judge.criteria decides the columns
_TS = pa.timestamp("us", tz="UTC")

SCHEMAS: dict[str, pa.Schema] = {
    "submissions": pa.schema(
        [
            ("submission_id", pa.string()),
            ("run_id", pa.string()),
            ("agent", pa.string()),
            ("model", pa.string()),
            ("organisation", pa.string()),
            ("submitted_at", _TS),
            ("run_created_at", _TS),
            ("harness_version", pa.string()),
            ("corpus_revision", pa.string()),
            ("predictions_hash", pa.string()),
            ("n_evaluations", pa.int32()),
            ("n_verdict_changed", pa.int32()),
            ("metadata", pa.string()),
            ("source_path", pa.string()),
            ("trust", pa.string()),
        ]
    ),
    "evaluations": pa.schema(
        [
            ("evaluation_id", pa.string()),
            ("submission_id", pa.string()),
            ("run_id", pa.string()),
            ("agent", pa.string()),
            ("model", pa.string()),
            ("task_id", pa.string()),
            ("attempt", pa.int32()),
            ("task_hash", pa.string()),
            ("prediction_hash", pa.string()),
            ("report_path", pa.string()),
            ("created_at", _TS),
            ("harness_version", pa.string()),
            ("corpus_revision", pa.string()),
            *[(c, pa.bool_()) for c in CRITERIA],
            ("migrated", pa.bool_()),
            ("silent", pa.bool_()),
            ("category", pa.string()),
            ("categories", pa.list_(pa.string())),
            ("reported_migrated", pa.bool_()),
            ("reported_category", pa.string()),
            ("verdict_changed", pa.bool_()),
            ("verdict_diff", pa.list_(pa.string())),
            ("claimed_success", pa.bool_()),
            ("human_interventions", pa.int32()),
            ("agent_cost_usd", pa.float64()),
            ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()),
            ("agent_wall_time_s", pa.float64()),
            ("exit_code", pa.int32()),
            ("timed_out", pa.bool_()),
            ("target", pa.string()),
            ("chips", pa.int32()),
            ("chip_seconds", pa.float64()),
            ("price_version", pa.string()),
            ("usd_per_chip_hour", pa.float64()),
            ("execution_cost_usd", pa.float64()),
            ("step_time_s", pa.float64()),
            ("reference_step_time_s", pa.float64()),
            ("compile_count", pa.int32()),
            ("reference_id", pa.string()),
            ("goal_metric", pa.string()),
            ("goal_value", pa.float64()),
            ("runtime", pa.string()),
            ("trust", pa.string()),
            ("reference_status", pa.string()),
            ("evidence_absent", pa.list_(pa.string())),
        ]
    ),
    "evidence": pa.schema(
        [
            ("evaluation_id", pa.string()),
            ("criterion", pa.string()),
            ("seq", pa.int32()),
            ("passed", pa.bool_()),
            ("ok", pa.bool_()),
            ("text", pa.string()),
            ("category", pa.string()),
            ("source", pa.string()),
        ]
    ),
    "reference_files": pa.schema(
        [
            ("reference_id", pa.string()),
            ("path", pa.string()),
            ("sha256", pa.string()),
            ("published_at", _TS),
        ]
    ),
    "tasks": pa.schema(
        [
            ("task_id", pa.string()),
            ("title", pa.string()),
            ("task_hash", pa.string()),
            ("target_chips", pa.int32()),
            ("precision_policy", pa.string()),
            ("steps", pa.int32()),
            ("source", pa.string()),
            ("updated_at", _TS),
        ]
    ),
}


def to_arrow(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows (dicts; missing keys become null) as an Arrow table with the store's column types."""
    schema = SCHEMAS[table]
    return pa.Table.from_pylist([{n: r.get(n) for n in schema.names} for r in rows], schema)


def evaluation_id(report: ReportFile, model: str | None) -> str:
    """Content key: the same prediction graded from the same trace is the same evaluation."""
    d = report.data
    key = [
        d["agent"],
        model,
        d["task_id"],
        int(d.get("attempt") or 1),
        d["prediction_hash"],
        d.get("task_hash"),
        d["harness_version"],
        sorted(report.file_hashes.items()),
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def verdict_diff(reported: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Verdict fields where report.json disagrees with the re-score."""
    diff = [k for k in ("migrated", "silent", "category") if reported.get(k) != fresh.get(k)]
    if sorted(reported.get("categories") or []) != sorted(fresh.get("categories") or []):
        diff.append("categories")
    old, new = reported.get("criteria") or {}, fresh.get("criteria") or {}
    for name in CRITERIA:
        if (old.get(name) or {}).get("passed") != (new.get(name) or {}).get("passed"):
            diff.append(f"criteria.{name}.passed")
    return diff


def evaluation_row(
    report: ReportFile,
    graded: dict[str, Any],
    metadata: dict[str, Any],
    price: Price | None,
    trust: str,
) -> dict[str, Any]:
    """One evaluations row. Verdict and every figure (time, compiles, goal, chip-seconds) come from
    `graded`, the harness's re-score of the hash-checked files, never from report.json. The agent's
    own cost and tokens are only stored for verified runs (the maintainers ran the prediction they
    came with); a self-reported run's are unverifiable and stored as unknown."""
    d = report.data
    verdict = graded["verdict"]
    pred = d.get("prediction") or {}
    if trust != "verified":
        pred = {k: pred.get(k) for k in ("claimed_success", "human_interventions")}
    execution = graded.get("execution") or {}
    candidate = graded.get("candidate") or {}
    goal = candidate.get("goal") or {}
    reported = d.get("verdict") or {}
    model = d.get("model") or metadata.get("model")
    chip_seconds = _float(execution.get("chip_seconds"))
    criteria = verdict["criteria"]
    diff = verdict_diff(reported, verdict)
    row: dict[str, Any] = {
        "evaluation_id": evaluation_id(report, model),
        "run_id": d["run_id"],
        "agent": d["agent"],
        "model": model,
        "task_id": d["task_id"],
        "attempt": int(d.get("attempt") or 1),
        "task_hash": d.get("task_hash"),
        "prediction_hash": d["prediction_hash"],
        "report_path": report.rel,
        "created_at": _timestamp(d.get("created_at")),
        "harness_version": d["harness_version"],
        "corpus_revision": d["corpus_revision"],
        "migrated": bool(verdict.get("migrated")),
        "silent": bool(verdict.get("silent")),
        "category": verdict.get("category"),
        "categories": list(verdict.get("categories") or []),
        "reported_migrated": reported.get("migrated"),
        "reported_category": _public(reported.get("category")),
        "verdict_changed": bool(diff),
        "verdict_diff": diff,
        "claimed_success": pred.get("claimed_success"),
        "human_interventions": pred.get("human_interventions"),
        "agent_cost_usd": _float(pred.get("agent_cost_usd")),
        "input_tokens": pred.get("input_tokens"),
        "output_tokens": pred.get("output_tokens"),
        "agent_wall_time_s": _float(pred.get("wall_time_s")),
        "exit_code": candidate.get("exit_code"),
        "timed_out": candidate.get("timed_out"),
        "target": execution.get("target"),
        "chips": execution.get("chips"),
        "chip_seconds": chip_seconds,
        "price_version": price.price_version if price else None,
        "usd_per_chip_hour": price.usd_per_chip_hour if price else None,
        "execution_cost_usd": (
            chip_seconds / 3600.0 * price.usd_per_chip_hour
            if price and chip_seconds is not None
            else (0.0 if not chip_seconds else None)
        ),
        "step_time_s": _float(execution.get("step_time_s")),
        "reference_step_time_s": _float(execution.get("reference_step_time_s")),
        "compile_count": execution.get("compile_count"),
        "reference_id": (d.get("reference") or {}).get("id"),
        "goal_metric": _public(goal.get("metric")),
        "goal_value": _float(goal.get("value")),
        "runtime": json.dumps(public_json(d.get("runtime")), sort_keys=True),
        "trust": trust,
        # evidence files the run lacks because its harness predates them (runfiles.recorded_before)
        "evidence_absent": list(report.evidence_absent),
    }
    for name in CRITERIA:
        row[name] = bool(criteria[name].get("passed"))
    return row


def evidence_rows(eval_id: str, verdict: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name in CRITERIA:
        criterion = verdict["criteria"][name]
        for seq, line in enumerate(criterion.get("evidence") or []):
            if isinstance(line, str):
                line = {"text": line, "category": None}
            rows.append(
                {
                    "evaluation_id": eval_id,
                    "criterion": name,
                    "seq": seq,
                    "passed": bool(criterion.get("passed")),
                    "ok": line.get("ok"),
                    "text": public_text(line.get("text", "")),
                    "category": line.get("category"),
                    # in-process, supervisor or static-scan: where the line's evidence came from
                    "source": _public(line.get("source")),
                }
            )
    return rows


def _public(value: Any) -> str | None:
    return None if value is None else public_text(value, 100)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _timestamp(value: Any) -> dt.datetime | None:
    if not value:
        return None
    stamp = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.timezone.utc)
