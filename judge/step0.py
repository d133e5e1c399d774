"""Calibrated step-0 limits: the limit on a candidate's step-0 deviation, from the calibration runs
a reference bundle holds (record/calibration.py says what they are and how they are recorded).

    rtol = max(floor, RNG_Z x the largest relative move of the generator draws
                      + PRECISION_Z x the move under bf16 autocast, where the policy allows bf16)

The floor is the task's `loss_step0_rtol` / `grad_norm_step0_rtol` (defaults in tasks/spec.py):
what a deterministic model's step 0 may move between devices. A variant whose run failed or
recorded no step counts as not measured (the floor stands).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu2tpu.record.calibration import START, UNMOVED, relative_deviation, step0_move
from gpu2tpu.record.trace import Trace

__all__ = ["PRECISION_Z", "RNG_Z", "Step0Limit", "other_batch_limit", "relative_deviation",
           "seeds_limit", "step0_limit"]

# With 4 draws, the largest move is below 0.63 of its spread's scale in only 5% of bundles; RNG_Z 4
# then still leaves a correct migration's own draw about 2.5 standard deviations.
RNG_Z = 4.0
PRECISION_Z = 2.0  # bf16 on the target rounds differently from bf16 on the reference device


@dataclass(frozen=True)
class Step0Limit:
    rtol: float
    text: str  # how the limit was reached, for the evidence line


def step0_limit(key: str, floor: float, reference: float, runs: dict[str, Trace]) -> Step0Limit:
    """The limit on the relative step-0 deviation of `key` ("loss" or "grad_norm")."""
    draws = [m for name, t in runs.items() if name.startswith("rng-")
             if (m := step0_move(t, key, reference)) is not None]
    if not runs:
        return Step0Limit(floor, f"floor {floor:g}; no calibration runs")
    rng = max(draws, default=0.0)
    bf16 = step0_move(runs["bf16"], key, reference) if "bf16" in runs else None
    calibrated = RNG_Z * rng + PRECISION_Z * (bf16 or 0.0)
    parts = [f"{RNG_Z:g} x {rng:.3g} (generator alone, {len(draws)} draws)"]
    if bf16 is not None:
        parts.append(f"{PRECISION_Z:g} x {bf16:.3g} (bf16)")
    text = f"calibrated {' + '.join(parts)}, floor {floor:g}"
    return Step0Limit(max(floor, calibrated), text)


def other_batch_limit(key: str, reference: float, runs: dict[str, Trace]) -> Step0Limit | None:
    """Where the gold trains step 0 on another batch: RNG_Z x the largest move of the start draws
    (None when the references hold none, a bundle built before them, or when they moved nothing:
    a project whose optimizer is not a torch.optim.Optimizer, or one built after its first batch)."""
    moves = [m for name, t in runs.items() if name.startswith(START)
             if (m := step0_move(t, key, reference)) is not None]
    if not moves or max(moves) < UNMOVED:
        return None
    return Step0Limit(RNG_Z * max(moves), f"the gold's first batch is not the reference's, so the limit "
                      f"is {RNG_Z:g} x {max(moves):.3g} (another first batch at the reference's "
                      f"initial weights, {len(moves)} draws)")


def seeds_limit(key: str, reference: float, seeds: list[Trace]) -> Step0Limit:
    """The other-batch limit in references built before the start draws: each other reference
    seed is one more draw (its initial weights moved too), so RNG_Z x the largest seed's move."""
    moves = [m for t in seeds if (m := step0_move(t, key, reference)) is not None]
    spread = max(moves, default=0.0)
    return Step0Limit(RNG_Z * spread, f"the gold's first batch is not the reference's, so the limit is "
                      f"{RNG_Z:g} x the reference seeds' largest move {spread:.3g}")
