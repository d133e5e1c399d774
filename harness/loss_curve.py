"""The loss curve, judged on two lines (both `numerics_drift`):

- against the reference: the mean deviation from the reference's curve within a band of
  `curve_drift_z` times the gold migration's own same-seed drift on the target, at least
  `curve_rtol` of the loss magnitude. It judges every candidate, but where the reference and the
  target draw random numbers differently (dropout masks, sampled noise), that band is as wide as
  what the generator alone moves, and a changed warm-up, clip or precision can sit inside it.
- against the gold migration's own curve on the target, step by step, where the candidate drew
  the same random numbers as the gold after every step (the probe's `random_state` hash of
  torch's, the XLA device's, numpy's and Python's generators) and trains in the gold's precision:
  then only floating-point order separates a correct migration's curve from the gold's. How far
  that order can carry a curve is measured, not assumed: the reference's `kick-1` calibration run
  (harness/calibration.py) is the reference again with its weights nudged by 1e-5 at the first
  step, and a chaotic training amplifies the nudge step by step (on one task, 1e-7 grew to 0.3 of
  the loss in 12 steps). Step t's band is KICK_Z times the largest deviation of the nudged run
  from the reference up to step t, at least SAME_DRAWS_RTOL of the loss magnitude. On the
  labelled suite 62 of 73 correct migrations reproduce the gold's curve bit for bit; the others
  draw other numbers or train in another precision.

A candidate whose draws differ is judged by the first line only (its evidence says so), so a trace
that lies about its draws gains nothing; without a kick run the second line is not judged.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING

from gpu2tpu.harness.trace import RunRecord, Trace, finite_or_none
from gpu2tpu.tasks.spec import RunSpec

if TYPE_CHECKING:
    from gpu2tpu.harness.criteria import CriterionResult

# The gold line's floor, a fraction of the loss magnitude: on the labelled suite, reordered sums
# (another graph cut, a closure synced per call) moved a same-draws curve at most 5e-5; the
# smallest semantic change seen there (bf16 autocast the policy forbids) 4e-3.
SAME_DRAWS_RTOL = 1e-3
# The kick (1e-5) is about 100 roundings; a correct migration's reordered sums are a few per step,
# each amplified like it: KICK_Z covers the steps where the amplified nudge saturates.
KICK_Z = 3.0


def curve_band(spec: RunSpec, refs: list[RunRecord], gold: Trace, horizon: int) -> dict[str, float]:
    """The reference line's band: `curve_drift_z` times the same-seed drift between the reference
    and the gold migration on the target (what a correct migration moves), at least `curve_rtol` of
    the loss magnitude; the cross-seed spread is reported beside it and used only when no gold
    curve exists."""
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


def check_curve(res: CriterionResult, spec: RunSpec, refs: list[RunRecord], gold: Trace,
                tr: Trace, kick: Trace | None) -> None:
    """Both lines (see the module's docstring)."""
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
    res.evidence[-1].update({k: finite_or_none(b[k]) for k in ("magnitude", "gold_drift", "spread")})
    check_gold_line(res, gold, tr, refs[0].trace, kick)


def first_other_draw(gold: Trace, tr: Trace, horizon: int) -> int | None:
    """The first of `horizon` applied steps after which the candidate's random generators stand
    elsewhere than the gold's (None: the same draws at every step; a step without a hash, from a
    probe before the hash or a forged record, counts as other draws)."""
    for t, (g, c) in enumerate(zip(gold.applied[:horizon], tr.applied[:horizon])):
        hg, hc = g.get("random_state"), c.get("random_state")
        if not isinstance(hg, str) or hg != hc:
            return t
    return None


def amplification(reference: Trace, kick: Trace | None, horizon: int) -> list[float] | None:
    """Per step t, the largest deviation of the nudged run from the reference up to t (None
    without a finite kick run as long as the horizon)."""
    if kick is None:
        return None
    k, r = kick.losses[:horizon], reference.losses[:horizon]
    if len(k) < horizon or len(r) < horizon or not all(math.isfinite(v) for v in k + r):
        return None
    out, top = [], 0.0
    for a, b in zip(k, r):
        top = max(top, abs(a - b))
        out.append(top)
    return out


def check_gold_line(res: CriterionResult, gold: Trace, tr: Trace, reference: Trace,
                    kick: Trace | None) -> None:
    """The second line: the candidate's curve against the gold's on the target, step by step,
    where both drew the same random numbers in the same precision; otherwise a passing line that
    says why it is not judged."""
    horizon = min(len(tr.losses), len(gold.losses))
    gold_curve, cand = gold.losses[:horizon], tr.losses[:horizon]
    if not horizon or not all(math.isfinite(v) for v in gold_curve):
        return
    head = f"loss curve against the gold migration on the target over {horizon} steps"
    other = first_other_draw(gold, tr, horizon)
    ga, ca = gold.autocast_in_effect(), tr.autocast_in_effect()
    amplified = amplification(reference, kick, horizon)
    why = None
    if other is not None:
        why = (f"the candidate's random generators stand elsewhere than the gold's after step "
               f"{other} (other draws; the reference line judges it)")
    elif ga != ca:
        why = (f"autocast {', '.join(f'{d}:{dt}' for d, dt in ca) or 'none'} where the gold's is "
               f"{', '.join(f'{d}:{dt}' for d, dt in ga) or 'none'} (the precision line judges that)")
    elif amplified is None:
        why = "the references hold no complete kick run to measure floating-point amplification"
    if why is not None:
        res.check(True, f"{head}: not judged, {why}", "numerics_drift")
        return
    assert amplified is not None
    magnitude = statistics.fmean(abs(g) for g in gold_curve)
    floor = SAME_DRAWS_RTOL * magnitude
    bands = [max(floor, KICK_Z * a, 1e-12) for a in amplified]  # 1e-12: an all-zero curve
    devs = [abs(c - g) for c, g in zip(cand, gold_curve)]
    worst = max(range(horizon), key=lambda t: devs[t] / bands[t])
    res.check(devs[worst] <= bands[worst], f"{head}, the same random draws at every step and the "
              f"same precision: largest deviation against its step's band at step {worst}: "
              f"{devs[worst]:.4g}, band {bands[worst]:.4g} = max({SAME_DRAWS_RTOL:g} x the gold's "
              f"loss magnitude {magnitude:.4g}, {KICK_Z:g} x the kick run's largest deviation from the "
              f"reference by then {amplified[worst]:.4g})", "numerics_drift",
              ("gold_curve", devs[worst], bands[worst]))
