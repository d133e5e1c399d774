"""The loss curve, judged on two lines (both `numerics_drift`):

- against the reference: the mean deviation from the reference's curve within a band of
  `curve_drift_z` times the gold migration's own same-seed drift on the target, at least
  `curve_rtol` of the loss magnitude. It judges every candidate, but where the reference and the
  target draw random numbers differently (dropout masks, sampled noise), that band is as wide as
  what the generator alone moves, and a changed dropout, warm-up or precision can sit inside it.
- against the gold migration's own curve on the target, where the candidate drew the same random
  numbers as the gold after every step (the probe's `random_state` hash of torch's, the XLA
  device's, numpy's and Python's generators) and trains in the gold's precision: then nothing but
  floating-point order separates a correct migration's curve from the gold's. On the labelled
  suite 62 of 73 correct migrations reproduce the gold's curve bit for bit; the band is
  SAME_DRAWS_RTOL of the loss magnitude. A candidate whose draws differ is judged by the first line
  only (its evidence says so), so a trace that lies about its draws gains nothing.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING

from gpu2tpu.harness.trace import RunRecord, Trace, finite_or_none
from gpu2tpu.tasks.spec import RunSpec

if TYPE_CHECKING:
    from gpu2tpu.harness.criteria import CriterionResult

# What reordering floating-point sums moves a curve with the same draws, as a fraction of the loss
# magnitude: at most 5e-5 on the labelled suite (another graph cut, a closure synced per call);
# the smallest semantic change seen there (bf16 autocast the policy forbids) moves it 4e-3.
SAME_DRAWS_RTOL = 1e-3


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
                tr: Trace) -> None:
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
    check_gold_line(res, gold, tr)


def first_other_draw(gold: Trace, tr: Trace, horizon: int) -> int | None:
    """The first of `horizon` applied steps after which the candidate's random generators stand
    elsewhere than the gold's (None: the same draws at every step; a step without a hash, from a
    probe before the hash or a forged record, counts as other draws)."""
    for t, (g, c) in enumerate(zip(gold.applied[:horizon], tr.applied[:horizon])):
        hg, hc = g.get("random_state"), c.get("random_state")
        if not isinstance(hg, str) or hg != hc:
            return t
    return None


def check_gold_line(res: CriterionResult, gold: Trace, tr: Trace) -> None:
    """The second line: the candidate's curve against the gold's on the target, where both drew the
    same random numbers in the same precision; otherwise a passing line that says why it is not
    judged."""
    horizon = min(len(tr.losses), len(gold.losses))
    gold_curve, cand = gold.losses[:horizon], tr.losses[:horizon]
    if not horizon or not all(math.isfinite(v) for v in gold_curve):
        return
    other = first_other_draw(gold, tr, horizon)
    ga, ca = gold.autocast_in_effect(), tr.autocast_in_effect()
    head = f"loss curve against the gold migration on the target over {horizon} steps"
    if other is not None:
        res.check(True, f"{head}: not judged, the candidate's random generators stand elsewhere than "
                  f"the gold's after step {other} (other draws; the reference line judges it)",
                  "numerics_drift")
        return
    if ga != ca:
        shown = ", ".join(f"{d}:{dt}" for d, dt in ca) or "none"
        res.check(True, f"{head}: not judged, autocast {shown} where the gold's is "
                  f"{', '.join(f'{d}:{dt}' for d, dt in ga) or 'none'} (the precision line judges "
                  "that)", "numerics_drift")
        return
    magnitude = statistics.fmean(abs(g) for g in gold_curve)
    mean_dev = statistics.fmean(abs(c - g) for c, g in zip(cand, gold_curve))
    band = SAME_DRAWS_RTOL * magnitude
    res.check(mean_dev <= band, f"{head}, the same random draws at every step and the same "
              f"precision: mean deviation {mean_dev:.4g}, band {band:.4g} = {SAME_DRAWS_RTOL:g} x "
              f"the gold's loss magnitude {magnitude:.4g} (floating-point order alone)",
              "numerics_drift", ("gold_curve", mean_dev, band))
