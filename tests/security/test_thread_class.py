"""A thread's class in the kernel view (judge/kernel_checks.py) is the graded code's to shape:
whatever class its threads fall in, eager work on the host stays host tensor compute."""

from __future__ import annotations

from kernel_views import GOLD, view

from gpu2tpu.judge.criteria import CriterionResult
from gpu2tpu.judge.kernel_checks import check_kernel, profile
from gpu2tpu.record.targets import get_target


def test_eager_workers_that_enter_xla_now_and_then_are_still_host_compute() -> None:
    """OpenMP workers that call into XLA's runtime (5% or more of their samples) are classed as
    tracing threads, out of "host eager execution"; their kernels still count as host compute."""
    honest_workers = [{"host_kernels": 1500, "jit": 250}, {"host_kernels": 1400, "jit": 200}]
    disguised_workers = [dict(w, xla_runtime=200) for w in honest_workers]
    main = {"python": 1500, "host_kernels": 300, "jit": 200, "xla_runtime": 50}
    busy = {"xla_runtime": 1500, "jit": 300}
    honest, disguised = (view([main, *w, busy]) for w in (honest_workers, disguised_workers))
    assert profile(disguised).host_exec_s < profile(honest).host_exec_s  # the class moved
    assert profile(disguised).host_compute_s == profile(honest).host_compute_s  # the work did not
    res = CriterionResult("hardware")
    check_kernel(res, get_target("xla-cpu"), 3.0, disguised, GOLD, None, True)
    bad = {e["signal"]: e["category"] for e in res.evidence if not e["ok"]}
    assert bad.get("kernel_host_compute") == "cpu_fallback", res.evidence
