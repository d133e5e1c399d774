"""`gpu2tpu evaluate`: run every prediction under observation and grade it."""

from __future__ import annotations

import hashlib
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm import tqdm

from gpu2tpu import __version__
from gpu2tpu.corpus import revision
from gpu2tpu.harness.evidence_here import say_at_start
from gpu2tpu.harness.inputs import check_request, select
from gpu2tpu.harness.interrupts import Interrupted, Stopper
from gpu2tpu.harness.patch_hunks import applied_part
from gpu2tpu.harness.predictions import Prediction
from gpu2tpu.harness.progress import Progress
from gpu2tpu.harness.references import copy_references, ensure_references
from gpu2tpu.harness.run_dir import evaluation_lock, write_summary
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
    """Grade every prediction in `predictions` into runs_root/run_id; returns this invocation's
    part of summary.json (its evaluations, counts and errors; summary.json itself lists every
    evaluation in the run directory, harness/run_dir.py).

    The request and the whole predictions file are checked first (harness/inputs.py: UserError,
    nothing run). The first Ctrl-C starts nothing new and raises `Interrupted` once the running
    evaluations are written (harness/interrupts.py). Relative paths are taken from the caller's
    working directory (they are made absolute here, before any process runs elsewhere)."""
    check_request(run_id, workers, timeout_s)
    target = get_target(target_name)
    sandboxed.configure(unsafe=unsafe, hide=[Path(runs_root)])  # the graded code never sees runs
    sandboxed.sandbox_mode()  # refuses here, before anything runs, when bwrap is missing
    chosen = select(Path(predictions), tasks)
    preds, specs = chosen.predictions, chosen.specs
    say_at_start("local", target_name)  # the inputs hold: what this machine can observe, once
    layout = RunLayout(Path(runs_root) / run_id)
    layout.root.mkdir(parents=True, exist_ok=True)
    reports: list[Report] = []
    with Stopper(log) as stop:
        built: dict[str, tuple[str, Path]] = {}
        # references first (every candidate of a task shares them), those of different tasks side by side
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(ensure_references, spec, target, log): task_id
                       for task_id, spec in specs.items()}
            for task_id, fut in stop.completed(futures, "reference build"):
                built[task_id] = fut.result()
        if stop.requested:
            raise Interrupted(write_summary(layout, [], []), len(preds))
        refs = {task_id: _copy_references(layout, *built[task_id]) for task_id in specs}

        def job(pred: Prediction) -> Report | None:
            with evaluation_lock(layout, pred.label, log):
                if stop.requested:  # it waited for another evaluate past a Ctrl-C: leave it
                    return None
                return evaluate_or_infra(specs[pred.task_id], pred, layout, refs[pred.task_id],
                                         target, timeout_s)

        progress = Progress(len(preds))  # the candidates' pace, after the references
        with ThreadPoolExecutor(max_workers=workers) as pool, \
                tqdm(total=len(preds), desc="evaluating", unit="run", file=sys.stderr,
                     disable=not sys.stderr.isatty()) as bar:
            jobs = {pool.submit(job, p): p for p in preds}
            for pred, fut in stop.completed(jobs, "evaluation"):
                report = fut.result()
                if report is None:
                    continue
                reports.append(report)
                bar.update(1)
                progress.done(len(reports))
                line = progress.line(f"{pred.label}: {report.outcome}")
                bar.write(line, file=sys.stderr) if not bar.disable else log(line)
        summary = write_summary(layout, reports, [])
        if stop.requested:
            raise Interrupted(summary, len(preds) - len(reports))
    return summary


def _copy_references(layout: RunLayout, key: str, cached: Path) -> tuple[str, Path]:
    """The bundle copied into the run, verified and hashed before any candidate runs (reports
    record these hashes)."""
    dest = layout.references(key)
    hashes = copy_references(cached, dest)
    _REF_HASHES[key] = {(dest / rel).relative_to(layout.root).as_posix(): h
                        for rel, h in hashes.items() if Path(rel).name in (*RUN_FILES, KERNEL)}
    return key, dest


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
            write_json(eval_dir / SCAN, scan_patch(applied_part(patch), ws.project, original_tree(spec)))
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
