"""The supervisor's evidence lines: what the kernel saw of a run (kernel.json, written from outside
the graded process by record/kernel_view.py) against what the run's own records claim.

Where the CPU time went decides, measured against the gold migration's own kernel view on the
same task and hardware, with the task's time budget as the tolerance (the same factor the
performance criterion allows a migration's time):
- XLA execution: CPU time in XLA's runtime and JIT code on the threads that execute XLA programs
  (no thread that runs the interpreter: those trace). A migration runs the same computation, so
  it needs at least the gold's divided by the budget.
- host tensor compute: CPU time in PyTorch's eager kernels (libtorch, OpenMP, oneDNN/MKL) and in
  JIT code run by the interpreter's threads or by threads that run PyTorch's kernels (oneDNN's
  JIT). The same training on the host spends it; on the target it is dispatch overhead. At most
  the budget times the gold's.
A limit is set from the gold's figure at its upper end: samples in code the observer's maps did
not yet show (`unknown`: code mapped since its last read, a JIT's new kernels or XLA's new
programs) on threads that are not XLA's runtime may have been host compute. How many land there
grows with the machine's load, not with the migration; the run's own figure counts only what was
positively host compute.
Evidence the grader could not collect (no kernel view, no CPU samples: perf_event_open not
permitted) fails the line as `unverified`, never a pass.
In-process records that all claim the target beside a kernel view that saw no XLA execution are
`tampered`; an honest run on the host fails here as `wrong_device` too (both sources agree); host
compute beside real XLA execution is work left on the host (`cpu_fallback`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult
    from gpu2tpu.record.targets import Target

SUPERVISOR, IN_PROCESS = "supervisor", "in-process"
# The category of a verdict that needs evidence the grader could not collect: not the agent's failure,
# never ranked (a run is `migrated` only on evidence that was there)
UNVERIFIED = "unverified"
SAMPLES_HOW = ("`sysctl -w kernel.perf_event_paranoid=1`, or run the grader as root or with "
               "CAP_PERFMON, then grade again")
ENABLE_SAMPLES = f"enable CPU samples with {SAMPLES_HOW}"
PYTHON_SHARE = 0.05  # a thread with at least this share of its samples in the interpreter runs Python
# Fewer samples than this are noise (Poisson: +-14%); no CPU-time limit is set below them
NOISE_SAMPLES = 50
# The harness's resolution in CPU seconds: two observations (0.25 s each) of one thread. CPU time
# before a run's first observation is never sampled, and no CPU-time limit is set below this.
RESOLUTION_S = 0.5


@dataclass(frozen=True)
class Profile:
    """Where a run's CPU time went, in seconds, from its kernel.json."""

    cpu_s: float  # the whole process tree, from /proc
    sampled_s: float
    xla_exec_s: float  # XLA's runtime and JIT code on the threads that execute its programs
    xla_trace_s: float  # XLA's runtime on the interpreter's threads (tracing)
    host_compute_s: float  # PyTorch's host kernels anywhere, and host JIT code
    host_exec_s: float  # of which: host JIT code, and everything PyTorch's worker threads ran
    unknown_host_s: float  # in code not yet in the maps read, on threads other than XLA's runtime's
    runtime_libraries: tuple[str, ...]
    period_s: float  # sampling period (0: no samples)
    modified_code: tuple[str, ...] = ()  # trusted code files a process wrote into (in memory)

    @property
    def sampled(self) -> bool:
        return self.period_s > 0

    @property
    def unsampled_s(self) -> float:
        """CPU time no sample saw (threads or processes that lived between two observations)."""
        return max(0.0, self.cpu_s - self.sampled_s)


def profile(kernel: dict[str, Any]) -> Profile:
    """Each thread's samples by the code they landed in (kernel_view.KINDS), the thread classed by
    what it runs: the interpreter or a thread tracing for it (traces, dispatches, or computes on
    the host), XLA's runtime (executes programs), or PyTorch's eager kernels (OpenMP workers). A
    thread's name is the graded code's to choose, so no class reads it."""
    samples = kernel.get("cpu_samples") or {}
    period = float(samples.get("period_s") or 0.0) if samples.get("method") else 0.0
    xla_exec = xla_trace = host = host_exec = unknown = 0
    for thread in kernel.get("threads") or []:
        s = {k: int(v) for k, v in (thread.get("samples") or {}).items()}
        n = sum(s.values())
        runtime, jit, kernels = s.get("xla_runtime", 0), s.get("jit", 0), s.get("host_kernels", 0)
        if not n:
            continue
        if runtime > kernels and s.get("python", 0) < PYTHON_SHARE * n:
            # XLA's runtime thread: its JIT code is XLA's compiled programs
            xla_exec += runtime + jit
            host += kernels
            continue
        unknown += s.get("unknown", 0)
        if max(s.get("python", 0), runtime) >= PYTHON_SHARE * n:
            # the interpreter's, or one that traces for it (PyTorch's autograd thread runs the
            # backward of an XLA graph: dispatch with a share in XLA's runtime, which OpenMP's
            # eager workers never enter); its JIT code is oneDNN's
            xla_trace += runtime
            host += kernels + jit
            host_exec += jit
        else:  # PyTorch's eager worker (OpenMP): all it runs is host tensor compute
            xla_exec += runtime
            host += kernels + jit
            host_exec += kernels + jit
    libs = sorted({lib for p in kernel.get("processes") or [] for lib in p.get("runtime_libraries") or []})
    return Profile(cpu_s=float(kernel.get("cpu_s") or 0.0),
                   sampled_s=float(samples.get("total") or 0) * period,
                   xla_exec_s=xla_exec * period, xla_trace_s=xla_trace * period,
                   host_compute_s=host * period, host_exec_s=host_exec * period,
                   unknown_host_s=unknown * period,
                   runtime_libraries=tuple(libs), period_s=period,
                   modified_code=tuple(sorted({f for p in kernel.get("processes") or []
                                               for f in p.get("modified_code") or []})))


def check_kernel(res: CriterionResult, target: Target, budget: float, cand: dict[str, Any] | None,
                 gold: dict[str, Any] | None, ref: dict[str, Any] | None, claims: bool) -> None:
    """The hardware criterion's supervisor lines. `claims`: every one of the run's own records
    (parameters, inputs, losses) says it used the target; a kernel view that contradicts them
    makes the line `tampered`, one that agrees with an honest host run `wrong_device`."""
    bad = "tampered" if claims else "wrong_device"
    said = "; the run's own records claim the target" if claims else ""
    if cand is None:
        if gold is None:
            res.check(False, "no kernel view of this run or of its gold (recorded before the harness "
                      "kept one): what ran where was not observed from outside the run, so the "
                      "hardware criterion is unverified; grade it again with this harness",
                      UNVERIFIED, source=SUPERVISOR)
        else:
            res.check(False, "no kernel view of this run although the gold's was recorded: the "
                      "evaluation is incomplete", "infra", source=SUPERVISOR)
        return
    c = profile(cand)
    g = profile(gold) if gold is not None else None
    # no honest run writes into the runtime's or PyTorch's code: samples there would be named
    # after code that is no longer what runs
    res.check(not c.modified_code, "trusted code rewritten in memory by the run: "
              f"{', '.join(c.modified_code) or 'none'}", "tampered", source=SUPERVISOR)
    if g is not None and g.runtime_libraries:
        res.check(bool(c.runtime_libraries), "XLA / TPU runtime mapped by the run: "
                  f"{', '.join(c.runtime_libraries) or 'none'} (gold: {', '.join(g.runtime_libraries)})"
                  + ("" if c.runtime_libraries else said), bad, source=SUPERVISOR)
    _check_chip(res, cand, gold, bad, said)
    if g is None or not (c.sampled and g.sampled):
        res.check(False, "where the CPU time went was not observed, so the hardware criterion is "
                  f"unverified: {_unsampled_why(cand, c, gold, g)}", UNVERIFIED, source=SUPERVISOR)
        return
    # as a ratio that must stay within the budget, like the time lines: gold's over the run's
    shortfall = g.xla_exec_s / max(c.xla_exec_s, g.period_s)
    executed = shortfall <= budget
    res.check(executed, f"CPU time executing XLA programs (XLA's runtime threads) "
              f"{c.xla_exec_s:.2f} s, gold {g.xla_exec_s:.2f} s (at least 1/{budget:g} of it)"
              + ("" if executed else said), bad, ("kernel_xla_exec_shortfall", shortfall, budget),
              source=SUPERVISOR)
    # beside real XLA execution, host compute over the gold's is work left on the host, as
    # CPU-fallback ops leave it (the records may be honest); without any XLA execution, the
    # records' claim is what the kernel contradicts
    if executed:
        bad, said = "cpu_fallback", ""
    floor = NOISE_SAMPLES * g.period_s
    limit = budget * max(g.host_exec_s + g.unknown_host_s, floor)
    res.check(c.host_exec_s <= limit, f"host eager execution (host JIT code, PyTorch's worker "
              f"threads) {c.host_exec_s:.2f} s, gold {g.host_exec_s:.2f} s{_unclassified(g)} "
              f"(limit {limit:.2f} s)"
              + ("" if c.host_exec_s <= limit else said), bad,
              ("kernel_host_exec", c.host_exec_s, limit), source=SUPERVISOR)
    r = profile(ref) if ref is not None else None
    base = max(g.host_compute_s + g.unknown_host_s, floor)
    limit = budget * base
    if r is not None and r.sampled:  # fails only nearer the host-only reference than the gold
        limit = max(limit, math.sqrt(base * (r.host_compute_s + r.unknown_host_s)))
    res.check(c.host_compute_s <= limit, f"host tensor compute (PyTorch's host kernels, host JIT "
              f"code) {c.host_compute_s:.2f} s, gold {g.host_compute_s:.2f} s{_unclassified(g)}"
              + (f", original code on the host {r.host_compute_s:.2f} s{_unclassified(r)}"
                 if r and r.sampled else "")
              + f" (limit {limit:.2f} s)" + ("" if c.host_compute_s <= limit else said), bad,
              ("kernel_host_compute", c.host_compute_s, limit), source=SUPERVISOR)
    cap = budget * max(g.unsampled_s, RESOLUTION_S)
    res.check(c.unsampled_s <= cap, f"CPU time no sample saw (threads or processes too short-lived "
              f"to watch) {c.unsampled_s:.2f} s of {c.cpu_s:.2f} s, gold {g.unsampled_s:.2f} s "
              f"(limit {cap:.2f} s)", bad, ("kernel_unsampled", c.unsampled_s, cap), source=SUPERVISOR)


def _unclassified(p: Profile) -> str:
    return f" (+{p.unknown_host_s:.2f} s in code mapped since the last maps read)" \
        if p.unknown_host_s >= 0.005 else ""


def _unsampled_why(cand: dict[str, Any], c: Profile, gold: dict[str, Any] | None,
                   g: Profile | None) -> str:
    if gold is None or g is None:
        return "the gold has no kernel view (its references predate it): rebuild them with this harness"
    missing = [(who, (view.get("cpu_samples") or {}).get("error") or "no CPU samples were taken")
               for who, view, seen in (("this run", cand, c), ("the gold", gold, g)) if not seen.sampled]
    return "; ".join(f"{who}: {error}" for who, error in missing) + f"; {ENABLE_SAMPLES}"


def _check_chip(res: CriterionResult, cand: dict[str, Any], gold: dict[str, Any] | None, bad: str,
                said: str) -> None:
    """On a TPU host: the run held the accelerator device files open where the gold did."""
    want = sorted((gold or {}).get("chip", {}).get("device_files") or [])
    if not want:
        return
    have = sorted((cand.get("chip") or {}).get("device_files") or [])
    res.check(bool(have), f"accelerator device files held open: {', '.join(have) or 'none'} "
              f"(gold: {', '.join(want)})" + ("" if have else said), bad, source=SUPERVISOR)
