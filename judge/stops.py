"""A run stopped at its time limit: named by its cause where the steps it did record show one.

A migration that recompiles at every step runs many times slower than its gold; whether it is then
stopped by the task's cap (`timeout`) or finishes late (`recompilation`) depends on how busy the
machine was (issue 41: the same broken migration was graded either way). The steps it recorded
before the stop carry XLA's compilation counter, so a storm visible there names the verdict
(causes before symptoms); the stop stays in the evidence as the symptom. Without such steps the
stop is named by where its limit came from: the gold's wall time (`slow`) or a cap (`timeout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu2tpu.judge.kernel_checks import IN_PROCESS
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.tasks.spec import RunSpec

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult


def _compiles_at(trace: Trace, step: int) -> int | None:
    counters = trace.counters_at(step)
    return None if counters is None else int(counters.get("compiles", 0))


def compile_storm(spec: RunSpec, cand: Trace, gold: Trace) -> str | None:
    """The evidence line when the steps a stopped run recorded compiled more after warm-up than
    the gold over the same steps and the task's allowance; None otherwise."""
    warm, last = spec.performance.warmup_steps, len(cand.steps) - 1
    if last < warm or not gold.steps:
        return None
    c0, c1 = _compiles_at(cand, warm - 1), _compiles_at(cand, last)
    g0, g1 = _compiles_at(gold, warm - 1), _compiles_at(gold, last)
    if c0 is None or c1 is None or g0 is None or g1 is None:
        return None
    mine, golds = c1 - c0, g1 - g0
    allow = spec.performance.compile_allowance
    if mine <= golds + allow:
        return None
    return (f"{mine} compilations from warm-up step {warm} to step {last}, the last it recorded "
            f"before the stop (gold {golds} over the same steps, allowance {allow}): the "
            "recompilation is what made it run out of time")


def stopped_at(res: CriterionResult, spec: RunSpec, proc: dict[str, Any], gold: RunRecord,
               cand: Trace) -> None:
    """The stop's lines: the cause the recorded steps show, if any, then the limit, named by where
    it came from as process.json recorded it (runs recorded before it kept one: recomputed from
    the task and the gold)."""
    gold_wall = float(gold.process.get("wall_s") or 0.0)
    limit = proc.get("time_limit")
    if not isinstance(limit, dict) or not isinstance(limit.get("time_s"), (int, float)):
        own = spec.time_limit(gold_wall)
        limit = {"time_s": own, "from": "gold" if own < spec.timeout_s else "task"}
    seconds, source = float(limit["time_s"]), limit.get("from")
    if source == "gold" and gold_wall > 0:  # the limit came from the gold's wall time: slow, not hung
        wall = float(proc.get("wall_s") or seconds)
        text, category = (f"stopped at the {seconds:.0f} s time limit, {wall / gold_wall:.1f}x the "
                          f"gold's wall time {gold_wall:.1f} s (budget "
                          f"{spec.performance.step_time_budget}x)"), "slow"
    else:
        cap = "the caller's --timeout" if source == "--timeout" else "the task's cap"
        text, category = f"killed after the {seconds:.0f} s time limit ({cap})", "timeout"
    cause = compile_storm(spec, cand, gold.trace)
    if cause is None:
        res.check(False, text, category)
        return
    res.check(False, cause, "recompilation", source=IN_PROCESS)
    res.evidence.append({"ok": False, "category": None, "text": f"{text}: the symptom"})
