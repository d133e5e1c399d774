"""Issue 41, causes first: a run stopped at its time limit whose recorded steps show a
recompilation storm is graded `recompilation`, not `timeout` or `slow`. (CSDI's per-sample topk
migration, labelled recompilation, recompiled at every step; on a busy machine it reached the
task's 600 s cap after nine steps and was graded `timeout`: the category moved with the load.)"""

from __future__ import annotations

from typing import Any

from test_validity import _run, _steps

from gpu2tpu.judge.verdict import grade
from gpu2tpu.record.targets import get_target
from gpu2tpu.tasks.finder import find_task


def _compiling(steps: list[dict[str, Any]], per_step: int, warm: int = 2) -> list[dict[str, Any]]:
    """Steps whose cumulative compile counter grows by `per_step` after `warm` warm-up compiles."""
    return [{**s, "counters": {"compiles": warm + per_step * i}} for i, s in enumerate(steps)]


def _cap(spec: Any) -> dict[str, Any]:
    return {"time_s": float(spec.timeout_s), "from": "task"}


def test_a_stopped_run_that_recompiled_every_step_is_recompilation() -> None:
    spec = find_task("cifar_amp")
    ref = _run(_compiling(_steps(40), 0))
    storm = _run(_compiling(_steps(9), 1), wall_s=spec.timeout_s, timed_out=True,
                 time_limit=_cap(spec))
    verdict = grade(spec, get_target("xla-cpu"), [ref], ref, storm)
    assert verdict["category"] == "recompilation", verdict["categories"]
    assert "timeout" not in verdict["categories"]
    lines = [e for e in verdict["criteria"]["runs"]["evidence"] if not e["ok"]]
    assert "compilations from warm-up step" in lines[0]["text"]
    assert any("time limit" in e["text"] and e["category"] is None for e in lines)  # the symptom
    assert not verdict["migrated"] and verdict["failing"] == ["runs", "numerics", "hardware",
                                                              "goal", "performance"]


def test_a_stopped_run_without_a_storm_keeps_the_limits_name() -> None:
    spec = find_task("cifar_amp")
    ref = _run(_compiling(_steps(40), 0))
    # compiles within the gold's and the allowance: the stop is what there is to say
    calm = _run(_compiling(_steps(9), 0), wall_s=spec.timeout_s, timed_out=True,
                 time_limit=_cap(spec))
    assert grade(spec, get_target("xla-cpu"), [ref], ref, calm)["category"] == "timeout"
    # no step after warm-up recorded: nothing shows a cause
    early = _run(_compiling(_steps(2), 5), wall_s=spec.timeout_s, timed_out=True,
                 time_limit=_cap(spec))
    assert grade(spec, get_target("xla-cpu"), [ref], ref, early)["category"] == "timeout"
    # the gold compiles as much over the same steps: not a storm of the migration's
    busy_gold = _run(_compiling(_steps(40), 1))
    same = _run(_compiling(_steps(9), 1), wall_s=spec.timeout_s, timed_out=True,
                 time_limit=_cap(spec))
    assert grade(spec, get_target("xla-cpu"), [busy_gold], busy_gold, same)["category"] == "timeout"


def test_the_cap_names_a_stop_only_where_the_golds_cpu_time_reaches_it_too() -> None:
    """dlg's LBFGS on the device, labelled slow, was graded timeout after its gold took 70.9 s of
    wall time for 25.1 s of CPU on a busy machine: 5x that wall time passed the 300 s cap, 5x the
    CPU time did not. On the emulated target the gold's CPU time decides which limit applied."""
    spec = find_task("cifar_amp")
    factor = max(spec.performance.time_limit_gold_factor, spec.performance.step_time_budget)
    under = spec.timeout_s / factor / 2  # CPU seconds whose gold factor stays under the cap
    stretched = _run(_compiling(_steps(40), 0), wall_s=spec.timeout_s, cpu_s=under)
    stopped = _run(_compiling(_steps(9), 0), wall_s=spec.timeout_s, timed_out=True,
                   time_limit=_cap(spec))
    verdict = grade(spec, get_target("xla-cpu"), [stretched], stretched, stopped)
    assert verdict["category"] == "slow", verdict["categories"]
    assert "above" in verdict["criteria"]["runs"]["evidence"][-1]["text"]
    # the gold's own work reaches the cap: the cap is the limit, and a stop there is a timeout
    heavy = _run(_compiling(_steps(40), 0), wall_s=spec.timeout_s, cpu_s=spec.timeout_s)
    assert grade(spec, get_target("xla-cpu"), [heavy], heavy, stopped)["category"] == "timeout"
    # the caller's own --timeout is always a timeout
    asked = _run(_compiling(_steps(9), 0), wall_s=30.0, timed_out=True,
                 time_limit={"time_s": 30.0, "from": "--timeout"})
    assert grade(spec, get_target("xla-cpu"), [stretched], stretched, asked)["category"] == "timeout"
    # on a TPU, where the work is not this machine's CPU time, the limit's own source decides
    assert grade(spec, get_target("tpu"), [stretched], stretched, stopped)["category"] == "timeout"
