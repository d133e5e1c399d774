"""`gpu2tpu evaluate`: run every prediction under observation and grade it."""

from __future__ import annotations

import hashlib
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
from gpu2tpu.harness.predictions import Prediction, read_predictions
from gpu2tpu.harness.references import copy_references, ensure_references
from gpu2tpu.judge.regrade import grade_evaluation
from gpu2tpu.judge.verdict import infra_verdict
from gpu2tpu.record.execution import COMPLETE, run_and_record, runtime_versions, time_limit
from gpu2tpu.record.report import (
    EVALUATION_FILES,
    GOAL,
    KERNEL,
    PATCH,
    PROCESS,
    REPORT,
    RUN_FILE_SCHEMA,
    RUN_FILES,
    SCAN,
    SCHEMA_VERSION,
    Report,
    ReportError,
    RunLayout,
    hash_file,
    read_json,
    write_json,
)
from gpu2tpu.record.runner import provenance
from gpu2tpu.record.tamper_scan import scan_patch
from gpu2tpu.record.targets import DEFAULT_TARGET, Target, get_target
from gpu2tpu.record.workspace import PatchRejected, apply_patch, from_directory, original_tree
from gpu2tpu.sandbox import process as sandboxed
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.materialise import write_patch
from gpu2tpu.tasks.spec import RunSpec

_print_lock = threading.Lock()
_REF_HASHES: dict[str, dict[str, str]] = {}  # reference id -> {run-relative path: sha256}


def log(message: str) -> None:
    with _print_lock:
        print(message, file=sys.stderr, flush=True)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def evaluate_predictions(predictions: Path, run_id: str, runs_root: Path = Path("runs"),
                         tasks: list[str] | None = None, workers: int = 1,
                         target_name: str = DEFAULT_TARGET, timeout_s: float | None = None,
                         unsafe: bool = False) -> dict[str, Any]:
    """Grade every prediction in `predictions` into runs_root/run_id; returns summary.json's content.

    Relative paths are taken from the caller's working directory (they are made absolute here,
    before any process runs elsewhere)."""
    target = get_target(target_name)
    sandboxed.configure(unsafe=unsafe, hide=[Path(runs_root)])  # the graded code never sees runs
    sandboxed.sandbox_mode()  # refuses here, before anything runs, when bwrap is missing
    preds, errors = read_predictions(Path(predictions).expanduser())
    if tasks:
        preds = [p for p in preds if p.task_id in tasks]
    layout = RunLayout(Path(runs_root) / run_id)
    layout.root.mkdir(parents=True, exist_ok=True)
    specs: dict[str, RunSpec] = {}
    for pred in preds:
        if pred.task_id not in specs:
            try:
                spec = find_task(pred.task_id)
            except Exception as exc:
                errors.append(f"{predictions}:line {pred.line}: {exc}")
                continue
            specs[pred.task_id] = spec
    skipped = [p for p in preds if p.task_id not in specs]
    for pred in skipped:
        if not any(f"line {pred.line}:" in e for e in errors):
            errors.append(f"{predictions}:line {pred.line}: unknown task {pred.task_id!r}")
    for err in errors:
        log(f"skipped: {err}")
    preds = [p for p in preds if p.task_id in specs]
    refs: dict[str, tuple[str, Path]] = {}
    ref_hashes: dict[str, dict[str, str]] = {}
    # references first (every candidate of a task shares them), those of different tasks side by side
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        built = dict(zip(specs, pool.map(lambda s: ensure_references(s, target, log), specs.values())))
    for task_id, (key, cached) in built.items():
        dest = layout.references(key)
        # verified and hashed here, before any candidate runs; reports record these hashes
        hashes = copy_references(cached, dest)
        ref_hashes[key] = {(dest / rel).relative_to(layout.root).as_posix(): h
                           for rel, h in hashes.items() if Path(rel).name in (*RUN_FILES, KERNEL)}
        refs[task_id] = (key, dest)
    _REF_HASHES.update(ref_hashes)
    reports: list[Report] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            tqdm(total=len(preds), desc="evaluating", unit="run", file=sys.stderr,
                 disable=not sys.stderr.isatty()) as bar:
        futures = {pool.submit(evaluate_or_infra, specs[p.task_id], p, layout, refs[p.task_id], target,
                               timeout_s): p
                   for p in preds}
        for fut in as_completed(futures):
            pred = futures[fut]
            report = fut.result()
            reports.append(report)
            bar.update(1)
            line = f"[{len(reports)}/{len(preds)}] {pred.label}: {report.outcome}"
            bar.write(line, file=sys.stderr) if not bar.disable else log(line)
    return write_summary(layout, reports, errors)


def _report(spec: RunSpec, pred: Prediction, layout: RunLayout, target: Target, **fields: Any) -> Report:
    return Report(run_id=layout.run_id, task_id=spec.task_id, task_hash=spec.content_hash,
                  agent=pred.agent, attempt=pred.attempt, prediction_hash=pred.content_hash(),
                  target=target.name, created_at=now_iso(), schema_version=SCHEMA_VERSION,
                  harness_version=__version__, corpus_revision=revision(),
                  model=pred.fields.get("model"),
                  prediction={k: v for k, v in pred.fields.items() if k != "model"}, **fields)


def evaluate_or_infra(spec: RunSpec, pred: Prediction, layout: RunLayout, ref: tuple[str, Path],
                      target: Target, timeout_s: float | None = None) -> Report:
    """evaluate_one, with a harness failure reported as `infra` (not the agent's fault)."""
    try:
        return evaluate_one(spec, pred, layout, ref, target, timeout_s)
    except Exception as exc:  # the harness itself failed: label it, keep the other evaluations
        eval_dir = layout.evaluation(pred.agent, pred.task_id, pred.attempt)
        eval_dir.mkdir(parents=True, exist_ok=True)
        report = _report(spec, pred, layout, target,
                         verdict=infra_verdict(f"harness error: {type(exc).__name__}: {exc}"))
        report.write(eval_dir / REPORT)
        return report


def evaluate_one(spec: RunSpec, pred: Prediction, layout: RunLayout, ref: tuple[str, Path],
                 target: Target, timeout_s: float | None = None) -> Report:
    eval_dir = layout.evaluation(pred.agent, pred.task_id, pred.attempt)
    cache_key = hashlib.sha256(f"{pred.content_hash()}|{spec.content_hash}|{ref[0]}|{target.name}|"
                               f"{__version__}|{sandboxed.sandbox_mode()}|{timeout_s}".encode()).hexdigest()
    old = eval_dir / REPORT
    if old.exists():
        try:
            previous = Report.load(old)
        except Exception:
            previous = None
        if previous is not None and previous.cache_key == cache_key:
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
        write_patch(eval_dir / PATCH, patch)
    except PatchRejected as exc:
        write_patch(eval_dir / PATCH, pred.patch or "")
        write_json(eval_dir / PROCESS, {"schema_version": RUN_FILE_SCHEMA, **provenance(),
                                        "patch_rejected": str(exc), "exit_code": None,
                                        "timed_out": False, "wall_s": 0.0})
        write_json(eval_dir / GOAL, {"schema_version": RUN_FILE_SCHEMA, **provenance(), "value": None,
                                     "error": "not run"})
        ws = None
    if ws is not None:
        try:  # what the patch adds, scanned and recorded before the candidate runs
            write_json(eval_dir / SCAN, scan_patch(patch, ws.project, original_tree(spec)))
            gold_wall = read_json(ref[1] / "gold" / PROCESS).get("wall_s")  # time limit from gold
            run_and_record(spec, ws, eval_dir, spec.seed, target,
                           limit=time_limit(spec, gold_wall, timeout_s))
        finally:
            ws.cleanup()
    harness_s = time.monotonic() - started
    files = {name: hash_file(eval_dir / name) for name in (*EVALUATION_FILES, SCAN, KERNEL)
             if (eval_dir / name).exists()}
    files.update(_REF_HASHES[ref[0]])  # recorded before any candidate ran
    report = _report(spec, pred, layout, target, cache_key=cache_key,
                     reference={"id": ref[0], "dir": ref[1].relative_to(layout.root).as_posix(),
                                "device": reference_device_of(ref[1])},
                     runtime={**runtime_versions(), "sandbox": sandboxed.sandbox_mode()}, files=files)
    graded = grade_evaluation(spec, layout, eval_dir, report)
    report.verdict, report.candidate, report.execution = (graded["verdict"], graded["candidate"],
                                                           graded["execution"])
    report.timings = {"evaluation_s": round(harness_s, 3)}
    report.write(eval_dir / REPORT)
    return report


def reference_device_of(bundle: Path) -> str | None:
    """The device a bundle's original code ran on, as its `complete` facts say (None: a bundle
    that did not complete, whose evaluations are infra)."""
    try:
        parts = read_json(bundle / COMPLETE).get("parts")
    except ReportError:
        return None
    return parts.get("reference_device") if isinstance(parts, dict) else None


def write_summary(layout: RunLayout, reports: list[Report], errors: list[str]) -> dict[str, Any]:
    counts: dict[str, dict[str, int]] = {}
    for r in reports:
        c = counts.setdefault(r.agent, {"migrated": 0, "total": 0})
        c["total"] += 1
        c["migrated"] += int(bool(r.verdict.get("migrated")))
    paths = sorted(f"{r.label}/{REPORT}" for r in reports)
    summary = {"schema_version": SCHEMA_VERSION, "run_id": layout.run_id, "harness_version": __version__,
               "corpus_revision": revision(), "created_at": now_iso(), "evaluations": paths,
               "counts": counts, "errors": errors}
    write_json(layout.summary, summary)
    return summary
