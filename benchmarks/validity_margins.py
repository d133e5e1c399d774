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
import math
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from gpu2tpu.harness.regrade import regrade_report


def _reports(run_dirs: list[Path], regrade: bool) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            sys.exit(f"{run_dir}: no such run directory (give runs/<run_id> of a validate run)")
        for path in sorted(run_dir.glob("**/report.json")):
            report = json.loads(path.read_text())
            if "verdict" in report and "agent" in report:
                if regrade:  # the verdict of the current grader, from the run's saved files
                    report["verdict"] = regrade_report(path)
                found.append((run_dir, report))
    if not found:
        sys.exit(f"no report.json under {', '.join(map(str, run_dirs))}: run `gpu2tpu validate` first")
    return found


def _ratio(line: dict[str, Any]) -> float:
    value, limit = line.get("value"), line.get("limit")
    if value is None:
        return math.inf
    return value / limit if limit else (0.0 if value == 0 else math.inf)


def margins(run_dirs: list[Path], regrade: bool = True) -> dict[str, Any]:
    """task -> {signals: {signal: {limit, correct: (ratio, who), broken: (ratio, who)}}, band: [...]}"""
    out: dict[str, Any] = defaultdict(lambda: {"signals": {}, "band": [], "verdicts": []})
    for run_dir, report in _reports(run_dirs, regrade):
        task, agent = report["task_id"], report["agent"]
        correct = not agent.startswith("broken-")
        verdict = report["verdict"]
        out[task]["verdicts"].append((run_dir.name, agent, verdict.get("category") or "migrated"))
        for crit in verdict.get("criteria", {}).values():
            for line in crit.get("evidence") or []:
                if "signal" not in line:
                    continue
                entry = out[task]["signals"].setdefault(line["signal"], {
                    "limit": line.get("limit"), "correct": (-math.inf, ""), "broken": (math.inf, "")})
                ratio, who = _ratio(line), f"{agent} ({run_dir.name})"
                if correct and ratio > entry["correct"][0]:
                    entry["correct"] = (ratio, who)
                if not correct and ratio < entry["broken"][0]:
                    entry["broken"] = (ratio, who)
                if line["signal"] == "curve" and agent == "gold":
                    out[task]["band"].append(tuple(line.get(k) for k in ("limit", "gold_drift", "spread")))
    return out


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


def tabulate(run_dirs: list[Path], stored: bool) -> int:
    table = margins(run_dirs, regrade=not stored)
    for task in sorted(table):
        info = table[task]
        print(f"\n## {task}")
        for band, drift, spread in info["band"]:
            print(f"curve band {band}; gold same-seed drift {drift}; cross-seed spread {spread}")
        width = max([16, *(len(name) + 1 for name in info["signals"])])
        print(f"{'signal':<{width}}{'limit':>10}  {'farthest correct':>16}  {'nearest broken':>14}  who")
        for name, e in sorted(info["signals"].items()):
            c, b, limit = e["correct"], e["broken"], e["limit"]
            shown = f"{limit:.4g}" if isinstance(limit, (int, float)) else str(limit or "-")
            print(f"{name:<{width}}{shown:>10}  {c[0]:>16.3g}  "
                  f"{b[0]:>14.3g}  correct: {c[1] or '-'}; broken: {b[1] or '-'}")
        graded = defaultdict(set)
        for _run, agent, category in info["verdicts"]:
            graded[agent].add(category)
        flips = {a: sorted(c) for a, c in graded.items() if len(c) > 1}
        print(f"verdicts that changed between runs: {flips or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
