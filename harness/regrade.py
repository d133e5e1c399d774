"""Grading from saved files only: verify hashes, rebuild the records, apply the criteria.

Used right after a run (evaluate), by `gpu2tpu report`, and by the leaderboard on ingest. It never
runs project code and never trusts the verdict written in report.json.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from gpu2tpu.harness.execution import seed_list
from gpu2tpu.harness.spec import RunSpec, find_task
from gpu2tpu.harness.trace import RunRecord
from gpu2tpu.harness.verdict import grade


class IntegrityError(Exception):
    """A saved file is missing or differs from the hash recorded for it."""


def hash_file(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run_dir(eval_dir: Path) -> Path:
    return eval_dir.parent.parent  # runs/<run_id>/<agent>/<task>


def _resolve(eval_dir: Path, name: str) -> Path:
    return _run_dir(eval_dir) / name if name.startswith("references/") else eval_dir / name


def verify_files(eval_dir: Path, files: dict[str, str]) -> None:
    for name, expected in files.items():
        if ".." in Path(name).parts:
            raise IntegrityError(f"{eval_dir}: file entry {name!r} points outside the run directory")
        path = _resolve(eval_dir, name)
        if not path.exists():
            raise IntegrityError(f"{path}: missing (recorded in report.json); the run is incomplete")
        if hash_file(path) != expected:
            raise IntegrityError(f"{path}: contents differ from the hash recorded in report.json")
    if "process.json" not in files:
        raise IntegrityError(f"{eval_dir}: report.json lists no process.json: the evaluation did not "
                             "complete (an infra failure?); evaluate this prediction again")


def grade_evaluation(spec: RunSpec, eval_dir: Path, report: dict[str, Any]) -> dict[str, Any]:
    """The graded parts of a report (verdict, candidate, execution) from the files on disk."""
    ref_dir = _run_dir(eval_dir) / report["reference"]["dir"]
    refs = [RunRecord.load(ref_dir / f"seed-{s}") for s in seed_list(spec)]
    gold = RunRecord.load(ref_dir / "gold")
    cand = RunRecord.load(eval_dir)
    target = report.get("target", "xla-cpu")
    verdict = grade(spec, target, refs, gold, cand)
    wall = float(cand.process.get("wall_s") or 0.0)
    counters = cand.trace.final_counters or {}
    step = cand.trace.median_step_time(spec.performance.warmup_steps)
    ref_step = refs[0].trace.median_step_time(spec.performance.warmup_steps) if refs else None
    return {
        "verdict": verdict,
        "candidate": {"exit_code": cand.exit_code, "timed_out": bool(cand.process.get("timed_out")),
                      "wall_s": wall, "patch_rejected": cand.process.get("patch_rejected"),
                      "goal": {"metric": spec.goal.metric, "value": cand.goal_value},
                      "device": cand.trace.runtime},
        "execution": {"target": target, "chips": spec.target_chips,
                      "chip_seconds": round(wall * spec.target_chips, 3),
                      "step_time_s": step, "reference_step_time_s": ref_step,
                      "compile_count": counters.get("compiles"),
                      "reference_goal": refs[0].goal_value if refs else None},
    }


def regrade_report(report_path: Path) -> dict[str, Any]:
    """A fresh verdict for one saved evaluation; IntegrityError when its evidence was altered."""
    report_path = Path(report_path)
    if not report_path.exists():
        raise IntegrityError(f"{report_path}: missing")
    report = json.loads(report_path.read_text())
    eval_dir = report_path.parent
    verify_files(eval_dir, report.get("files") or {})
    spec = find_task(report["task_id"])
    if spec.content_hash != report.get("task_hash"):
        raise IntegrityError(f"{report_path}: task {spec.task_id} has changed since this run "
                             f"(hash {report.get('task_hash', '')[:12]} vs {spec.content_hash[:12]})")
    return grade_evaluation(spec, eval_dir, report)["verdict"]
