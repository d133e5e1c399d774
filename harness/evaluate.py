"""`gpu2tpu evaluate`: run every prediction under observation and grade it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm import tqdm

from gpu2tpu import __version__
from gpu2tpu.corpus import revision
from gpu2tpu.harness.execution import ensure_references, run_and_record, runtime_versions, write_json
from gpu2tpu.harness.predictions import Prediction, evaluation_name, read_predictions
from gpu2tpu.harness.regrade import grade_evaluation, hash_file
from gpu2tpu.harness.runner import provenance
from gpu2tpu.harness.spec import RunSpec, find_task
from gpu2tpu.harness.verdict import infra_verdict
from gpu2tpu.harness.workspace import PatchRejected, apply_patch, from_directory

SCHEMA_VERSION = 1
_print_lock = threading.Lock()


def log(message: str) -> None:
    with _print_lock:
        print(message, file=sys.stderr, flush=True)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def evaluate_predictions(predictions: Path, run_id: str, runs_root: Path = Path("runs"),
                         tasks: list[str] | None = None, workers: int = 1, target: str = "xla-cpu",
                         timeout_s: float | None = None) -> dict[str, Any]:
    preds, errors = read_predictions(predictions)
    for err in errors:
        log(f"skipped: {err}")
    if tasks:
        preds = [p for p in preds if p.task_id in tasks]
    run_dir = runs_root / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    specs: dict[str, RunSpec] = {}
    for pred in preds:
        if pred.task_id not in specs:
            try:
                spec = find_task(pred.task_id)
            except Exception as exc:
                errors.append(f"line {pred.line}: {exc}")
                continue
            if timeout_s:
                spec = dataclasses.replace(spec, timeout_s=timeout_s)
            specs[pred.task_id] = spec
    preds = [p for p in preds if p.task_id in specs]
    refs: dict[str, tuple[str, Path]] = {}
    for task_id, spec in specs.items():  # references first: every candidate of a task shares them
        key, cached = ensure_references(spec, target, log)
        dest = run_dir / "references" / key
        if not (dest / "complete").exists():
            shutil.copytree(cached, dest, dirs_exist_ok=True)
        refs[task_id] = (key, dest)
    reports: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            tqdm(total=len(preds), desc="evaluating", unit="run", file=sys.stderr,
                 disable=not sys.stderr.isatty()) as bar:
        futures = {pool.submit(evaluate_or_infra, specs[p.task_id], p, run_dir, refs[p.task_id], target): p
                   for p in preds}
        for fut in as_completed(futures):
            pred = futures[fut]
            report = fut.result()
            reports.append(report)
            bar.update(1)
            v = report["verdict"]
            outcome = "migrated" if v["migrated"] else v["category"]
            line = f"[{len(reports)}/{len(preds)}] {pred.label}: {outcome}"
            bar.write(line, file=sys.stderr) if not bar.disable else log(line)
    summary = write_summary(run_dir, run_id, reports, errors)
    return summary


def evaluate_or_infra(spec: RunSpec, pred: Prediction, run_dir: Path, ref: tuple[str, Path],
                      target: str) -> dict[str, Any]:
    """evaluate_one, with a harness failure reported as `infra` (not the agent's fault)."""
    try:
        return evaluate_one(spec, pred, run_dir, ref, target)
    except Exception as exc:  # the harness itself failed: label it, keep the other evaluations
        eval_dir = run_dir / pred.label
        eval_dir.mkdir(parents=True, exist_ok=True)
        report = {"schema_version": SCHEMA_VERSION, "harness_version": __version__,
                  "corpus_revision": revision(), "run_id": run_dir.name, "task_id": spec.task_id,
                  "task_hash": spec.content_hash, "agent": pred.agent, "model": pred.fields.get("model"),
                  "attempt": pred.attempt, "prediction_hash": pred.content_hash(), "cache_key": None,
                  "created_at": now_iso(), "target": target, "files": {},
                  "prediction": {k: v for k, v in pred.fields.items() if k != "model"},
                  "verdict": infra_verdict(f"harness error: {type(exc).__name__}: {exc}")}
        write_json(eval_dir / "report.json", report)
        return report


def evaluate_one(spec: RunSpec, pred: Prediction, run_dir: Path, ref: tuple[str, Path],
                 target: str) -> dict[str, Any]:
    eval_dir = run_dir / pred.label
    cache_key = hashlib.sha256(f"{pred.content_hash()}|{spec.content_hash}|{ref[0]}|{target}|"
                               f"{__version__}".encode()).hexdigest()
    old = eval_dir / "report.json"
    if old.exists():
        previous = json.loads(old.read_text())
        if previous.get("cache_key") == cache_key:
            return previous
    shutil.rmtree(eval_dir, ignore_errors=True)
    eval_dir.mkdir(parents=True)
    started = time.monotonic()
    try:
        if pred.patch is not None:
            patch = pred.patch
            ws = apply_patch(spec, patch)
        else:
            ws, patch = from_directory(spec, Path(pred.migrated_dir or ""))
        (eval_dir / "patch.diff").write_text(patch)
    except PatchRejected as exc:
        (eval_dir / "patch.diff").write_text(pred.patch or "")
        write_json(eval_dir / "process.json", {"schema_version": 1, **provenance(),
                                               "patch_rejected": str(exc), "exit_code": None,
                                               "timed_out": False, "wall_s": 0.0})
        write_json(eval_dir / "goal.json", {"schema_version": 1, **provenance(), "value": None,
                                            "error": "not run"})
        ws = None
    if ws is not None:
        try:
            run_and_record(spec, ws, eval_dir, spec.seed, target)
        finally:
            ws.cleanup()
    harness_s = time.monotonic() - started
    report = build_report(spec, pred, run_dir, eval_dir, ref, target, cache_key)
    report["timings"] = {"evaluation_s": round(harness_s, 3)}
    write_json(eval_dir / "report.json", report)
    return report


def build_report(spec: RunSpec, pred: Prediction, run_dir: Path, eval_dir: Path,
                 ref: tuple[str, Path], target: str, cache_key: str) -> dict[str, Any]:
    files = {}
    for name in ("trace.jsonl", "process.json", "goal.json", "patch.diff"):
        path = eval_dir / name
        if path.exists():
            files[name] = hash_file(path)
    for path in sorted(ref[1].rglob("*")):
        if path.name in ("trace.jsonl", "process.json", "goal.json"):
            files[path.relative_to(run_dir).as_posix()] = hash_file(path)
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "harness_version": __version__,
        "corpus_revision": revision(), "run_id": run_dir.name, "task_id": spec.task_id,
        "task_hash": spec.content_hash, "agent": pred.agent, "model": pred.fields.get("model"),
        "attempt": pred.attempt, "prediction_hash": pred.content_hash(), "cache_key": cache_key,
        "created_at": now_iso(), "target": target,
        "prediction": {k: v for k, v in pred.fields.items() if k != "model"},
        "reference": {"id": ref[0], "dir": ref[1].relative_to(run_dir).as_posix()},
        "runtime": runtime_versions(), "files": files,
    }
    graded = grade_evaluation(spec, eval_dir, report)
    report.update(graded)
    return report


def write_summary(run_dir: Path, run_id: str, reports: list[dict[str, Any]],
                  errors: list[str]) -> dict[str, Any]:
    counts: dict[str, dict[str, int]] = {}
    for r in reports:
        c = counts.setdefault(r["agent"], {"migrated": 0, "total": 0})
        c["total"] += 1
        c["migrated"] += int(r["verdict"]["migrated"])
    paths = sorted(evaluation_name(r["agent"], r["task_id"], r["attempt"]) + "/report.json"
                   for r in reports)
    summary = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "harness_version": __version__,
               "corpus_revision": revision(), "created_at": now_iso(), "evaluations": paths,
               "counts": counts, "errors": errors}
    write_json(run_dir / "summary.json", summary)
    return summary
