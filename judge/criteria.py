"""The five criteria: pure functions over (RunSpec, reference runs, gold run, candidate run).

Each returns a CriterionResult whose evidence lines say what was checked; a failing line names its
failure category. Tolerances come from the reference runs' own magnitude and spread, never from a
bare absolute number, so an all-zero loss curve cannot pass.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpu2tpu.judge import step0
from gpu2tpu.judge.invariants import (
    check_init,
    check_integrity,
    check_invariants,
)
from gpu2tpu.judge.kernel_checks import IN_PROCESS, check_kernel
from gpu2tpu.judge.scan_checks import check_scan
from gpu2tpu.judge.stops import compiles_at, stopped_at
from gpu2tpu.judge.timing import check_times
from gpu2tpu.judge.training_config import check_config, check_workload
from gpu2tpu.record.first_batch import gold_first_batch_deviation
from gpu2tpu.record.targets import Target
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.tasks.spec import RunSpec

# Taxonomy order: the first failing category in this order names the verdict. Causes come
# before symptoms: a changed configuration or workload explains the numerical drift it causes,
# and the reads or compilations that only moved with it (fewer steps, another model structure).
CATEGORIES = ("patch_rejected", "tampered", "crash", "timeout", "wrong_device", "cpu_fallback",
              "chips_unused", "config_drift", "workload_changed", "recompilation", "host_sync",
              "numerics_drift", "goal_regressed", "slow", "unverified", "infra")


@dataclass(frozen=True)
class Inputs:
    """Everything a criterion may look at: the task, the target and the four kinds of run."""

    spec: RunSpec
    target: Target
    refs: list[RunRecord]
    gold: RunRecord
    cand: RunRecord
    # the reference's calibration runs (record/calibration.py), by folder name
    calibration: dict[str, Trace] = field(default_factory=dict)


@dataclass
class CriterionResult:
    name: str
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def check(self, ok: bool, text: str, category: str,
              measure: tuple[str, float, float] | None = None, source: str | None = None) -> bool:
        """One evidence line; `measure` = (signal, value, limit) for a line that compares a number
        with a limit, kept beside the text so margins can be tabulated (benchmarks/validity_margins.py);
        `source`: where the evidence came from, `supervisor` (observed from outside the graded
        process) or `in-process` (the probe's records, which code in the process can forge)."""
        line: dict[str, Any] = {"ok": bool(ok), "text": text, "category": None if ok else category}
        if measure is not None:
            line.update(signal=measure[0], value=_finite(measure[1]), limit=_finite(measure[2]))
        if source is not None:
            line["source"] = source
        self.evidence.append(line)
        return ok

    @property
    def passed(self) -> bool:
        return all(e["ok"] for e in self.evidence)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "evidence": self.evidence}


def _finite(x: float) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def runs(i: Inputs) -> CriterionResult:
    spec, cand = i.spec, i.cand
    res = CriterionResult("runs")
    proc = cand.process
    if proc.get("patch_rejected"):
        res.check(False, f"migration not applied: {proc['patch_rejected']}", "patch_rejected")
        return res
    # what the patch adds, scanned before it ran (tamper_scan.py); a harness that keeps kernel
    # views (kernel.json, listed for this run or its gold) kept scans before them: one is expected
    check_scan(res, cand.scan, expected=cand.kernel is not None or i.gold.kernel is not None)
    if proc.get("timed_out"):
        stopped_at(res, spec, proc, i.gold, cand.trace, i.target.emulated)
        return res
    over = proc.get("over_budget")
    if over:  # the sandbox stopped it: the budget, not the last line of a killed process, says why
        limit = (proc.get("budget") or {}).get(f"{over}_bytes")
        size = f" of {limit / 2**30:.1f} GiB" if isinstance(limit, (int, float)) else ""
        res.check(False, f"stopped by the sandbox: the run exceeded its {over} budget{size}", "crash")
        return res
    code = cand.exit_code
    error = ((cand.trace.end or {}).get("error") or "").strip().splitlines()
    detail = f": {error[-1]}" if error else ""
    if not res.check(code == 0, f"exit status {code}{detail}", "crash"):
        return res
    check_integrity(res, i.gold.trace, cand.trace, proc)
    applied = len(cand.trace.applied)
    res.check(applied >= spec.steps, f"{applied} optimizer steps taken, {spec.steps} expected",
              "workload_changed")
    return res


def numerics(i: Inputs) -> CriterionResult:
    spec, refs, cand = i.spec, i.refs, i.cand
    res = CriterionResult("numerics")
    ref, tr = refs[0].trace, cand.trace
    if not res.check(bool(tr.applied) and bool(ref.applied),
                     f"{len(tr.applied)} candidate and {len(ref.applied)} reference steps recorded",
                     "numerics_drift"):
        return res
    tol = spec.tolerances
    c0, r0 = tr.applied[0], ref.applied[0]
    # Where the gold's own first batch is not the reference's (the data or noise draws from the
    # device's generator before the first forward, as a rollout's sampled actions or a diffusion
    # model's noise do), step 0 trains on another draw: judged by calibration's start draws (other
    # first batches at the reference's initial weights), or, in references built before them, by
    # the same rule on the other seeds (each one more draw, its initial weights moved too).
    other_batch = gold_first_batch_deviation(ref, i.gold.trace) > tol.init_input_tol
    for key, floor, label in (("loss", tol.loss_step0_rtol, "loss"),
                              ("grad_norm", tol.grad_norm_step0_rtol, "grad norm")):
        c, r = c0.get(key), r0.get(key)
        if r is None:
            continue
        limit = step0.step0_limit(key, floor, r, i.calibration)
        rtol, why = limit.rtol, f": {limit.text}"
        if other_batch:  # the start draws, or the seeds in references built before them
            start = step0.other_batch_limit(key, r, i.calibration) \
                or step0.seeds_limit(key, r, [x.trace for x in refs[1:]])
            if start.rtol > rtol:
                rtol, why = start.rtol, f"; {start.text}"
        dev = step0.relative_deviation(c, r) if c is not None and math.isfinite(c) else math.inf
        res.check(dev <= rtol, f"step-0 {label} {c} vs reference {r:.6g} (rtol {rtol:.3g}{why})",
                  "numerics_drift", (f"step0_{key}", dev, rtol))
    _check_curve(res, spec, refs, i.gold.trace, tr)
    _check_precision(res, spec, tr)
    check_config(res, ref, tr)
    check_invariants(res, ref, tr)
    check_init(res, tol, ref, tr, i.gold.trace)
    check_workload(res, ref, tr)
    return res


def curve_band(spec: RunSpec, refs: list[RunRecord], gold: Trace, horizon: int) -> dict[str, float]:
    """The curve band: `curve_drift_z` times the same-seed drift between the reference and the gold
    migration on the target (what a correct migration moves), at least `curve_rtol` of the loss
    magnitude; the cross-seed spread is reported beside it and used only when no gold curve exists."""
    ref_curves = [r.trace.losses for r in refs if r.trace.applied]
    primary = ref_curves[0][:horizon]
    magnitude = statistics.fmean(abs(r) for r in primary)
    spread = 0.0
    if len(ref_curves) > 1:
        spread = statistics.fmean(statistics.pstdev(c[t] for c in ref_curves) for t in range(horizon))
    gold_curve = gold.losses[:horizon]
    tol = spec.tolerances
    if len(gold_curve) == horizon and all(math.isfinite(v) for v in gold_curve):
        drift = statistics.fmean(abs(g - r) for g, r in zip(gold_curve, primary))
        band = max(tol.curve_drift_z * drift, tol.curve_rtol * magnitude)
    else:
        drift = math.nan
        band = max(tol.curve_rtol * magnitude, tol.curve_spread_z * spread)
    return {"band": min(band, 0.5 * magnitude), "magnitude": magnitude, "gold_drift": drift,
            "spread": spread}


def _check_curve(res: CriterionResult, spec: RunSpec, refs: list[RunRecord], gold: Trace,
                 tr: Trace) -> None:
    ref_curves = [r.trace.losses for r in refs if r.trace.applied]
    horizon = min(len(tr.losses), *(len(c) for c in ref_curves))
    primary = ref_curves[0][:horizon]
    cand = tr.losses[:horizon]
    if not all(math.isfinite(v) for v in cand):
        res.check(False, "candidate loss is not finite within the replay horizon", "numerics_drift")
        return
    mean_dev = statistics.fmean(abs(c - r) for c, r in zip(cand, primary))
    b = curve_band(spec, refs, gold, horizon)
    res.check(mean_dev <= b["band"], f"loss curve over {horizon} steps: mean deviation {mean_dev:.4g}, "
              f"band {b['band']:.4g} = max({spec.tolerances.curve_drift_z} x gold same-seed drift "
              f"{b['gold_drift']:.4g}, {spec.tolerances.curve_rtol} x reference magnitude "
              f"{b['magnitude']:.4g}); cross-seed spread {b['spread']:.4g}", "numerics_drift",
              ("curve", mean_dev, b["band"]))
    res.evidence[-1].update({k: _finite(b[k]) for k in ("magnitude", "gold_drift", "spread")})


def _check_precision(res: CriterionResult, spec: RunSpec, tr: Trace) -> None:
    in_effect = tr.autocast_in_effect()
    allowed = {"bfloat16"} if spec.precision_policy == "bf16_allowed" else set()
    bad = [f"{d}:{dt}" for d, dt in in_effect if dt not in allowed]
    shown = ", ".join(f"{d}:{dt}" for d, dt in in_effect) or "none"
    res.check(not bad, f"autocast in effect: {shown}; policy {spec.precision_policy}; "
              f"model output dtype {tr.forward_dtype}", "config_drift")


def hardware(i: Inputs) -> CriterionResult:
    spec, target, gold, cand = i.spec, i.target, i.gold, i.cand
    res = CriterionResult("hardware")
    tr = cand.trace
    devices = (tr.optimizer or {}).get("param_devices") or []
    host = _gold_host_devices(i)
    res.check(bool(devices) and all(target.on_target(d) or d in host for d in devices),
              f"parameters on {devices or 'unknown'}"
              + (f" (the gold keeps its optimised tensors on {host})" if host else ""),
              "wrong_device", source=IN_PROCESS)
    inputs = _input_devices(tr)
    res.check(bool(inputs) and all(map(target.on_target, inputs)),
              f"model inputs on {inputs or 'unknown'}", "wrong_device", source=IN_PROCESS)
    losses = sorted({s.get("loss_device") or "unknown" for s in tr.applied})
    res.check(bool(losses) and all(map(target.on_target, losses)),
              f"loss computed on {losses or 'unknown'}", "wrong_device", source=IN_PROCESS)
    rt = tr.runtime
    expected = target.device_types
    res.check(rt.get("device_type") in expected, f"runtime device type "
              f"{rt.get('device_type')} (target {target.name}: {'/'.join(expected)})",
              "wrong_device", source=IN_PROCESS)
    res.check(rt.get("devices_used") == spec.target_chips,
              f"devices used {rt.get('devices_used')} of {rt.get('device_count')} "
              f"(task asks for {spec.target_chips}; spmd={rt.get('spmd')}, "
              f"world size {rt.get('world_size')})", "chips_unused", source=IN_PROCESS)
    gold_ops = set((gold.trace.final_counters or {}).get("fallback") or {})
    ops = (tr.final_counters or {}).get("fallback") or {}
    extra = {op: n for op, n in ops.items() if op not in gold_ops and op not in spec.fallback_allowlist}
    res.check(not extra, "CPU-fallback ops beyond the gold migration and allowlist: " +
              (", ".join(f"{op} x{n}" for op, n in sorted(extra.items())) if extra else "none"),
              "cpu_fallback", source=IN_PROCESS)
    # what the kernel saw, against the gold's kernel view: where both exist, both must pass; a
    # contradiction is tampering only where every record puts the model's tensors on the target (an
    # honest run that computes on the host after moving its model records a host input or loss)
    recorded = [*(d for d in devices if d not in host), *inputs, *losses]
    claims = bool(recorded) and all(map(target.on_target, recorded))
    check_kernel(res, target, spec.performance.step_time_budget, cand.kernel, gold.kernel,
                 i.refs[0].kernel if i.refs else None, claims)
    return res


def _input_devices(trace: Trace) -> list[str]:
    return sorted({d for s in trace.applied for d in s.get("input_devices") or []})


def _gold_host_devices(i: Inputs) -> list[str]:
    """Where the trusted gold keeps its optimised tensors off the target (an LBFGS on a few
    thousand values that reads them at every evaluation), a candidate may keep them there too."""
    gold_devices = (i.gold.trace.optimizer or {}).get("param_devices") or []
    return gold_devices if gold_devices and not any(map(i.target.on_target, gold_devices)) else []


def _per_step(trace: Trace, key: str, warmup: int) -> tuple[float, int]:
    """(count of `key` per step after warm-up, number of those steps) from cumulative counters."""
    start, end = trace.counters_at(warmup - 1), trace.counters_at(len(trace.steps) - 1)
    n = len(trace.steps) - warmup
    if not start or not end or n <= 0:
        return 0.0, 0
    return (float(end.get(key, 0)) - float(start.get(key, 0))) / n, n


def _compiles(trace: Trace, warmup: int) -> tuple[int, int]:
    """(compilations from the end of warm-up to the last step's record, compilations after it)."""
    base, last = compiles_at(trace, warmup - 1) or 0, compiles_at(trace, len(trace.steps) - 1) or 0
    end = int((trace.final_counters or {}).get("compiles", 0))
    return max(0, last - base), max(0, end - last)


def _steady_reads(trace: Trace, warmup: int) -> tuple[float, float, int]:
    """Host reads in the steady state: (share of steps after warm-up that read at all, reads in
    the median step, steps). A checkpoint or evaluation that reads every tensor in one step moves
    neither much, so it can neither hide a per-step read nor count as many; a read every step or
    every few steps moves the share, extra reads in every step the median."""
    deltas = trace.step_deltas("host_reads", warmup)
    if not deltas:
        return 0.0, 0.0, 0
    return sum(d > 0 for d in deltas) / len(deltas), statistics.median(deltas), len(deltas)


def performance(i: Inputs) -> CriterionResult:
    spec, gold, cand = i.spec, i.gold, i.cand
    res = CriterionResult("performance")
    perf, tr, gt = spec.performance, cand.trace, gold.trace
    warm = perf.warmup_steps
    if tr.final_counters is not None and gt.final_counters is not None:
        (cc, c_end), (gc, g_end) = _compiles(tr, warm), _compiles(gt, warm)
        res.check(cc <= gc + perf.compile_allowance, f"{cc} compilations from warm-up step {warm} to "
                  f"the last step (gold {gc}, allowance {perf.compile_allowance})", "recompilation",
                  ("steady_compiles", cc, gc + perf.compile_allowance), source=IN_PROCESS)
        # after the last step, the final reads and the save cut the last graph where the loop left
        # it: a cost of the run's end, paid once, whose time the time lines see
        res.evidence.append({"ok": True, "category": None, "source": IN_PROCESS, "text":
                             f"{c_end} compilations after the last step (final reads, saving; gold "
                             f"{g_end}): not recompilation"})
        (c_share, c_typical, n), (g_share, g_typical, _) = _steady_reads(tr, warm), _steady_reads(gt, warm)
        allow = perf.host_sync_allowance
        res.check(c_share <= g_share + allow and c_typical <= g_typical + allow,
                  f"host reads in {c_share:.0%} of {n} steps, {c_typical:g} in a typical step (gold "
                  f"{g_share:.0%}, {g_typical:g}; allowance {allow}; a checkpoint or evaluation counts "
                  "once, in its step)", "host_sync", source=IN_PROCESS)
        cs, n = _per_step(tr, "syncs", warm)
        # at least one in two steps, unless the trusted gold itself syncs less (an LBFGS on the host
        # whose device graph is rebuilt from host inputs at every closure evaluation has no lazy
        # state to grow: every evaluation's gradients are read back)
        gs, _ = _per_step(gt, "syncs", warm)
        need = min(0.5, gs)
        res.check(n == 0 or cs >= need, f"{cs:.2f} XLA syncs per step (gold {gs:.2f}"
                  + ("; fewer than one in two: the lazy graph grows across steps)" if cs < need else ")"),
                  "slow", source=IN_PROCESS)
    else:
        res.evidence.append({"ok": True, "text": "no XLA counters in this run", "category": None,
                             "source": IN_PROCESS})
    host = _gold_host_devices(i)
    params = {d for d in (tr.optimizer or {}).get("param_devices") or [] if d not in host}
    off = sorted(d for d in params.union(_input_devices(tr)) if not i.target.on_target(d))
    if off:
        # Time is compared with the gold on the same hardware only: a run on other hardware has no
        # meaningful ratio (the hardware criterion names it), and its timing swings with host load.
        res.evidence.append({"ok": True, "category": None, "text": "step and process time not "
                             f"compared with gold: parameters or model inputs on {off}, not on "
                             f"{i.target.name}", "source": IN_PROCESS})
        return res
    check_times(res, perf.step_time_budget, cand, gold, warm, i.target.emulated)
    return res


def goal(i: Inputs) -> CriterionResult:
    spec, refs, cand = i.spec, i.refs, i.cand
    res = CriterionResult("goal")
    ref_values = [v for v in (r.goal_value for r in refs) if v is not None]
    value = cand.goal_value
    if value is None or not math.isfinite(value):
        res.check(False, f"{spec.goal.metric}: no value ({cand.goal.get('error', 'no checkpoint')})",
                  "goal_regressed")
        return res
    if not ref_values:
        return res
    primary = ref_values[0]
    near, outlier = seeds_near(ref_values)
    spread = statistics.pstdev(near) if len(near) > 1 else 0.0
    tol = max(spec.goal.tolerance * abs(primary), spec.tolerances.curve_spread_z * spread)
    regression = (primary - value) if spec.goal.higher_is_better else (value - primary)
    left_out = f", spread without {outlier:.4g}, the seed farthest from it" if outlier is not None else ""
    res.check(regression <= tol, f"{spec.goal.metric} {value:.4g} vs reference {primary:.4g} "
              f"(seeds {', '.join(f'{v:.4g}' for v in ref_values)}; allowed regression {tol:.4g}"
              f"{left_out})", "goal_regressed", ("goal_regression", regression, tol))
    return res


def seeds_near(values: list[float]) -> tuple[list[float], float | None]:
    """The reference seeds whose spread bounds a correct run's goal, and the one left out: with
    three or more, the seed farthest from the first (the candidate's own seed) is left out, so one
    seed that trained badly cannot widen the allowed regression (issue 41: one of three at 0.335
    against 0.465 and 0.471 tripled it, and a changed loss weighting passed inside it)."""
    if len(values) < 3:
        return values, None
    far = max(range(1, len(values)), key=lambda k: abs(values[k] - values[0]))
    return [v for k, v in enumerate(values) if k != far], values[far]


@dataclass(frozen=True)
class Criterion:
    """One of the five fixed criteria: the verdict, the leaderboard's columns and its views, and the
    page's headers all derive from CRITERIA. Adding a criterion is one entry here."""

    name: str
    title: str  # a readable header
    question: str  # what it asks, for people
    check: Callable[[Inputs], CriterionResult]
    needs_run: bool = True  # judged only when the migration ran (was applied, did not crash)


CRITERIA: tuple[Criterion, ...] = (
    Criterion("runs", "Runs", "exits 0 and reaches the expected optimizer steps in time", runs,
              needs_run=False),
    Criterion("numerics", "Numerics", "same losses, gradients and training configuration as the "
              "reference", numerics),
    Criterion("hardware", "Hardware", "parameters, inputs and loss on the target, every chip used, "
              "no CPU fallbacks", hardware),
    Criterion("goal", "Goal", "the project's goal metric, measured by the harness, is kept", goal),
    Criterion("performance", "Performance", "no recompilation storm or per-step host syncs, step "
              "time within budget", performance),
)
CRITERION_NAMES: tuple[str, ...] = tuple(c.name for c in CRITERIA)
