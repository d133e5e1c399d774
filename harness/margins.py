"""The validity report: how far each graded signal sits from its limit, per task, for the farthest
correct migration (gold and alternatives: must stay below 1) and the nearest broken one (a broken
migration below 1 on a signal is caught by another line), over one or more runs of labelled
migrations. `gpu2tpu validate` prints it after every run; benchmarks/validity_margins.py over
several runs (e.g. three consecutive reruns).

Signals are the evidence lines that compare a number with a limit (`signal`, `value`, `limit`:
step-0 loss and grad norm, loss curve, first batch's inputs, post-clip norm).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.judge.regrade import regrade_report
from gpu2tpu.record.report import ReportError, RunLayout, read_json


def saved_reports(run_dir: Path) -> list[Path]:
    """Every evaluation's report.json in a run directory, whatever its summary.json lists."""
    return RunLayout(run_dir).saved_reports()


def _reports(run_dirs: list[Path], regrade: bool) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise UserError(f"{run_dir}: no such run directory (give runs/<run_id> of a validate run)")
        for path in saved_reports(run_dir):
            report = read_json(path)
            if "verdict" in report and "agent" in report:
                if regrade:  # the verdict of the current grader, from the run's saved files
                    try:
                        report["verdict"] = regrade_report(path)
                    except ReportError:  # altered evidence, or a task changed since: left out
                        continue
                found.append((run_dir, report))
    if not found:
        raise UserError(f"no report.json under {', '.join(map(str, run_dirs))}: run `gpu2tpu validate` first")
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


def tabulate(run_dirs: list[Path], stored: bool) -> int:
    """Print the report (regraded by this grader unless `stored`); 0."""
    table = margins(run_dirs, regrade=not stored)
    for task in sorted(table):
        info = table[task]
        print(f"\n## {task}")
        for band, drift, spread in info["band"]:
            print(f"curve band {band}; gold same-seed drift {drift}; cross-seed spread {spread}")
        width = max([16, *(len(name) + 1 for name in info["signals"])])
        print("(the two middle columns are value / limit: under 1 passes, the nearer to 1 the thinner)")
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
