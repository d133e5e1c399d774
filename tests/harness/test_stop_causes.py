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
