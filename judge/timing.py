"""The performance criterion's time lines: a migration's step and process time against the gold's,
on the same hardware.

Other processes on a busy machine stretch a run's wall time, not its CPU time; a run that waits
(sleeps, blocks on I/O) also stretches wall time. So on the emulated target, where the work is
this machine's CPU time, a wall ratio over budget is excused only when the CPU ratio is within it
and so is the wall ratio net of the other processes: scaled by the share of the machine's CPU
capacity they left (measured by the harness from /proc/stat, less the run's own process tree, so
load a run makes itself is not set aside). A run that waits on an idle machine keeps its ratio; one
beside others' load has it reduced by that load's share at most. On a TPU the work runs on the
chip, so wall time alone decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu2tpu.record.trace import RunRecord

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult


def _line(res: CriterionResult, what: str, ratio: float, cpu: float | None, others: float | None,
          budget: float, signal: str | None, source: str) -> None:
    """One time line: `ratio` of wall times, `cpu` the ratio of CPU times (None where CPU time is not
    the work), `others` the share of the machine other processes used during the candidate's run."""
    text, excused, decisive = f"{what}, {ratio:.2f}x gold", False, ratio
    if cpu is not None:
        text += f"; CPU time {cpu:.2f}x gold"
        if ratio > budget and others is not None:
            net = ratio * (1.0 - others)
            excused, decisive = cpu <= budget and net <= budget, max(cpu, net)
            text += (f"; other processes used {others:.0%} of the machine: {net:.2f}x net of them "
                     "(slow when either exceeds the budget)")
        elif ratio > budget:
            text += "; the machine's load was not measured: wall time decides"
    res.check(ratio <= budget or excused, f"{text} (budget {budget}x)", "slow",
              measure=(signal, decisive, budget) if signal else None, source=source)


def check_times(res: CriterionResult, budget: float, cand: RunRecord, gold: RunRecord, warmup: int,
                emulated: bool) -> None:
    """The median step time line and the process wall time line."""
    share = cand.process.get("others_cpu_share")
    others = float(share) if isinstance(share, (int, float)) else None
    tr, gt = cand.trace, gold.trace
    ct, gct = tr.median_step_time(warmup), gt.median_step_time(warmup)
    if ct is not None and gct:
        sc, gsc = tr.step_median("cpu_s", warmup), gt.step_median("cpu_s", warmup)
        cpu = sc / gsc if emulated and sc is not None and gsc else None
        # the probe's step records: written inside the graded process
        _line(res, f"median step time {ct * 1e3:.1f} ms", ct / gct, cpu, others, budget, "step_time",
              "in-process")
    cw, gw = cand.process.get("wall_s"), gold.process.get("wall_s")
    if cw and gw:
        cc, gc = cand.process.get("cpu_s"), gold.process.get("cpu_s")
        cpu = cc / gc if emulated and cc and gc else None
        _line(res, f"process wall time {cw:.1f} s" + (f" (CPU {cc:.1f} s)" if cpu is not None else ""),
              cw / gw, cpu, others, budget, None, "supervisor")  # measured by the sandbox
