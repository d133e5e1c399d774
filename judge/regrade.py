"""Grading from saved files only: verify hashes, rebuild the records, apply the criteria.

Used right after a run (evaluate), by `gpu2tpu report`, and by the leaderboard on ingest. It never
runs project code and never trusts the verdict or the figures written in report.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu2tpu.judge.verdict import grade
from gpu2tpu.record import calibration
from gpu2tpu.record.report import GOLD, KERNEL, SCAN, Report, ReportError, RunLayout, seed_dir
from gpu2tpu.record.targets import get_target
from gpu2tpu.record.trace import RunRecord
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.spec import RunSpec

IntegrityError = ReportError  # the name callers have used for an altered or incomplete run


def grade_evaluation(spec: RunSpec, layout: RunLayout, eval_dir: Path, report: Report) -> dict[str, Any]:
    """The graded parts of a report (verdict, candidate, execution) from the files on disk."""
    if not report.reference:
        raise ReportError(f"{eval_dir}: report.json names no reference directory")
    ref_dir = layout.inside(str(report.reference["dir"]))
    refs = [RunRecord.load(ref_dir / seed_dir(s)) for s in spec.seeds]
    gold = RunRecord.load(ref_dir / GOLD)
    cand = RunRecord.load(eval_dir)
    # a kernel view or a scan counts only where report.json lists it (so its hash was checked):
    # one left on disk but unlisted could say anything (a clean scan copied over a flagged one)
    if SCAN not in report.files:
        cand.scan = None
    ref_rel = str(report.reference["dir"]).rstrip("/")
    for rec, rel in ((cand, KERNEL), (gold, f"{ref_rel}/{GOLD}/{KERNEL}"),
                     *((r, f"{ref_rel}/{seed_dir(s)}/{KERNEL}") for r, s in zip(refs, spec.seeds))):
        if rel not in report.files:
            rec.kernel = None
    target = get_target(report.target)
    runs = calibration.load(ref_dir, ref_rel, set(report.files))
    verdict = grade(spec, target, refs, gold, cand, runs)
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
        "execution": {"target": target.name, "chips": spec.target_chips,
                      "chip_seconds": round(wall * spec.target_chips, 3),
                      "step_time_s": step, "reference_step_time_s": ref_step,
                      "compile_count": counters.get("compiles"),
                      "reference_goal": refs[0].goal_value if refs else None},
    }


def regrade(report: Report, report_path: Path, verified: bool = False) -> dict[str, Any]:
    """Fresh graded parts for a loaded report; checks every listed hash unless the caller already
    did (`verified`), and that the task is the one the run was graded against."""
    layout = RunLayout.of_report(report_path)
    eval_dir = Path(report_path).parent
    if not verified:
        report.verify_files(layout, eval_dir)
    spec = find_task(report.task_id)
    if spec.content_hash != report.task_hash:
        raise ReportError(f"{report_path}: task {spec.task_id} has changed since this run "
                          f"(hash {report.task_hash[:12]} vs {spec.content_hash[:12]}); "
                          "evaluate again with this gpu2tpu")
    return grade_evaluation(spec, layout, eval_dir, report)


def regrade_report(report_path: Path) -> dict[str, Any]:
    """A fresh verdict for one saved evaluation; ReportError when its evidence was altered."""
    return regrade(Report.load(Path(report_path)), Path(report_path))["verdict"]
