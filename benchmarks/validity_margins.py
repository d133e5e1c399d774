"""Benchmark: how far each graded signal sits from its limit, over one or more `gpu2tpu validate`
runs (e.g. three consecutive reruns, or one beside a CPU-bound process).

For every task and every signal that compares a number with a limit (evidence lines carrying
`signal`, `value`, `limit`: step-0 loss and grad norm, loss curve, first batch's inputs, post-clip
norm), prints value/limit for the farthest correct migration
(gold and alternatives: must stay below 1) and for the nearest broken one (its name; a broken
migration below 1 on a signal is caught by another line). Also per task: the curve band, the gold's
same-seed drift and the cross-seed spread, and every verdict that differs from its label.

    python benchmarks/validity_margins.py RUN_DIR [RUN_DIR ...]
    (RUN_DIR: runs/<run_id> as written by `gpu2tpu validate --runs runs --run-id <run_id>`)
    python benchmarks/validity_margins.py --tiny [--task charlm]
    (CI, tests/test_benchmarks.py: grades the task's gold and one broken migration into a temporary
    run directory first, as `validate` does, then tabulates it; on two CPU cores about 40 s with
    the task's references cached, a minute more to build them)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from gpu2tpu.harness.margins import tabulate


def tiny_run(task: str, root: Path) -> Path:
    """Grade `task`'s gold and its first broken migration labelled failing numerics (so both
    columns have a signal) into root/runs/tiny, as `gpu2tpu validate` does; the run directory."""
    from gpu2tpu.harness.evaluate import evaluate_predictions
    from gpu2tpu.harness.validate import labelled_migrations
    from gpu2tpu.tasks.finder import find_task

    items = labelled_migrations(find_task(task))
    broken = [m for m in items if m.agent.startswith("broken-")]
    if not broken:
        sys.exit(f"{task} has no broken migration to tabulate against its gold")
    chosen = [items[0], next((m for m in broken if "numerics" in m.failing), broken[0])]
    preds = root / "tiny.jsonl"
    preds.write_text("".join(json.dumps({"schema_version": 1, "task_id": m.task_id, "agent": m.agent,
                                         "patch": m.patch, "claimed_success": True}) + "\n"
                             for m in chosen))
    summary = evaluate_predictions(preds, "tiny", root / "runs", workers=2)
    if summary["errors"]:
        sys.exit(f"tiny run failed: {summary['errors']}")
    return root / "runs" / "tiny"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dirs", nargs="*", type=Path)
    ap.add_argument("--stored", action="store_true",
                    help="use the verdicts stored in report.json (default: regrade with this grader)")
    ap.add_argument("--tiny", action="store_true",
                    help="grade one task's gold and one broken migration first, and tabulate that run")
    ap.add_argument("--task", default="charlm", help="the task --tiny grades (default: charlm)")
    args = ap.parse_args(argv)
    if args.tiny == bool(args.run_dirs):
        ap.error("give RUN_DIR(s) or --tiny, one of the two")
    if args.tiny:
        with tempfile.TemporaryDirectory(prefix="gpu2tpu-margins-") as tmp:
            return tabulate([tiny_run(args.task, Path(tmp))], args.stored)
    return tabulate(args.run_dirs, args.stored)


if __name__ == "__main__":
    raise SystemExit(main())
