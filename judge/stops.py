"""A run stopped at its time limit: named by its cause where the steps it did record show one.

A migration that recompiles at every step runs many times slower than its gold; whether it is then
stopped by the task's cap (`timeout`) or finishes late (`recompilation`) depends on how busy the
machine was (issue 41: the same broken migration was graded either way). The steps it recorded
before the stop carry XLA's compilation counter, so a storm visible there names the verdict
(causes before symptoms); the stop stays in the evidence as the symptom. Without such steps the
stop is named by where its limit came from: the gold's wall time (`slow`) or a cap (`timeout`).

Which of the two applied moves with load too: the gold's wall time stretches on a busy machine, so
a gold factor that fits under the cap on an idle machine exceeds it on a busy one (dlg's LBFGS on
the device, labelled slow, was graded timeout after a gold run that took 70.9 s of wall time for
25.1 s of CPU). On the emulated target, where the work is this machine's CPU time, the cap counts
as the limit only when the gold factor times the gold's CPU time would have reached it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu2tpu.judge.kernel_checks import IN_PROCESS
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.tasks.spec import RunSpec

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult


def compiles_at(trace: Trace, step: int) -> int | None:
    """XLA's cumulative compilation count at a step's record (None where it has no counters)."""
    counters = trace.counters_at(step)
    return None if counters is None else int(counters.get("compiles", 0))


def compile_storm(spec: RunSpec, cand: Trace, gold: Trace) -> str | None:
    """The evidence line when the steps a stopped run recorded compiled more after warm-up than
    the gold over the same steps and the task's allowance; None otherwise."""
    warm, last = spec.performance.warmup_steps, len(cand.steps) - 1
    if last < warm or not gold.steps:
        return None
    c0, c1 = compiles_at(cand, warm - 1), compiles_at(cand, last)
    g0, g1 = compiles_at(gold, warm - 1), compiles_at(gold, last)
    if c0 is None or c1 is None or g0 is None or g1 is None:
        return None
    mine, golds = c1 - c0, g1 - g0
    allow = spec.performance.compile_allowance
    if mine <= golds + allow:
        return None
    return (f"{mine} compilations from warm-up step {warm} to step {last}, the last it recorded "
            f"before the stop (gold {golds} over the same steps, allowance {allow}): the "
            "recompilation is what made it run out of time")


def _limit_named(spec: RunSpec, limit: dict[str, Any], proc: dict[str, Any], gold: RunRecord,
                 emulated: bool) -> tuple[str, str]:
    """(category, text) of a stop by where its limit came from, judged load-free where it can be."""
    seconds, source = float(limit["time_s"]), limit.get("from")
    wall = float(proc.get("wall_s") or seconds)
    gold_wall = float(gold.process.get("wall_s") or 0.0)
    gold_cpu = gold.process.get("cpu_s")
    factor = max(spec.performance.time_limit_gold_factor, spec.performance.step_time_budget)
    if (source == "task" and emulated and isinstance(gold_cpu, (int, float))
            and 0 < factor * gold_cpu < seconds):
        return "slow", (f"stopped at the {seconds:.0f} s time limit (the task's cap), above "
                        f"{factor:g}x the gold's CPU time {gold_cpu:.1f} s: slow, not hung (the "
                        f"gold's wall time {gold_wall:.1f} s put its own limit above the cap)")
    if source == "gold" and gold_wall > 0:  # the limit came from the gold's wall time: slow, not hung
        return "slow", (f"stopped at the {seconds:.0f} s time limit, {wall / gold_wall:.1f}x the "
                        f"gold's wall time {gold_wall:.1f} s (budget "
                        f"{spec.performance.step_time_budget}x)")
    cap = "the caller's --timeout" if source == "--timeout" else "the task's cap"
    return "timeout", f"killed after the {seconds:.0f} s time limit ({cap})"


def stopped_at(res: CriterionResult, spec: RunSpec, proc: dict[str, Any], gold: RunRecord,
               cand: Trace, emulated: bool) -> None:
    """The stop's lines: the cause the recorded steps show, if any, then the limit, named by where
    it came from as process.json recorded it (runs recorded before it kept one: recomputed from
    the task and the gold)."""
    limit = proc.get("time_limit")
    if not isinstance(limit, dict) or not isinstance(limit.get("time_s"), (int, float)):
        own = spec.time_limit(float(gold.process.get("wall_s") or 0.0))
        limit = {"time_s": own, "from": "gold" if own < spec.timeout_s else "task"}
    category, text = _limit_named(spec, limit, proc, gold, emulated)
    cause = compile_storm(spec, cand, gold.trace)
    if cause is None:
        res.check(False, text, category)
        return
    res.check(False, cause, "recompilation", source=IN_PROCESS)
    res.evidence.append({"ok": False, "category": None, "text": f"{text}: the symptom"})
