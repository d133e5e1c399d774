"""Calibrated step-0 tolerances: how far the reference's first step moves with nothing but the
random generator, and with each precision the task's policy allows, measured when the references
are built (harness/execution.py `run_calibration`, the probe's harness/probe_calibration.py).

A model with dropout (or noise drawn inside the step) moves its step-0 loss with the generator: a
correct migration draws those numbers on its device, so its step 0 is one more such draw. The
limit on a candidate's step-0 deviation is therefore measured, not configured:

    rtol = max(floor, RNG_Z x the largest relative move of DRAWS generator draws
                      + PRECISION_Z x the move under bf16 autocast, where the policy allows bf16)

The floor is the task's `loss_step0_rtol` / `grad_norm_step0_rtol` (defaults in tasks/spec.py):
what a deterministic model's step 0 may move between devices. A variant whose run failed or
recorded no step counts as not measured (the floor stands).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from gpu2tpu.harness.report import TRACE
from gpu2tpu.harness.trace import Trace
from gpu2tpu.tasks.spec import RunSpec

CALIBRATION = "calibration"  # the folder of a reference bundle that holds the calibration runs
CALIBRATE_ENV = "GPU2TPU_CALIBRATE"  # the probe's switch (harness/probe.py reads it)
DRAWS = 4  # generator draws per task
# With 4 draws, the largest move is below 0.63 of its spread's scale in only 5% of bundles; RNG_Z 4
# then still leaves a correct migration's own draw about 2.5 standard deviations.
RNG_Z = 4.0
PRECISION_Z = 2.0  # bf16 on the target rounds differently from bf16 on the reference device


FIRST_DRAW = "rng-1"
UNMOVED = 1e-6  # a relative move below this is thread-order noise, not the generator


def moves_step0(reference: Trace, draw: Trace) -> bool:
    """Whether a generator draw moved the reference's step-0 loss or grad norm at all (a draw
    that failed counts as moving: the next draws are still run)."""
    if not reference.applied:
        return True
    for key in ("loss", "grad_norm"):
        r = reference.applied[0].get(key)
        if isinstance(r, (int, float)) and math.isfinite(r):
            moved = _move(draw, key, r)
            if moved is None or moved >= UNMOVED:
                return True
    return False


def variants(spec: RunSpec) -> list[tuple[str, str]]:
    """(folder name, probe mode) of every calibration run a task's references get."""
    out = [(f"rng-{k}", f"rng:{k}") for k in range(1, DRAWS + 1)]  # rng-1 first
    if spec.precision_policy == "bf16_allowed":
        out.append(("bf16", "bf16"))
    return out


START = "start-"  # the draws of a task whose gold trains step 0 on another batch


def start_variants() -> list[tuple[str, str]]:
    """(folder name, probe mode) of the draws made where training starts (the first optimizer's
    construction), run only for a task whose gold's first batch is not the reference's: each is
    step 0 on another draw of its batch, noise or rollout, at the reference's initial weights."""
    return [(f"{START}{k}", f"start:{k}") for k in range(1, DRAWS + 1)]


def load(ref_dir: Path, ref_rel: str, listed: set[str]) -> dict[str, Trace]:
    """The calibration traces of a reference directory, each only where report.json lists it
    (so its hash was checked): an unlisted one could say anything."""
    out: dict[str, Trace] = {}
    folder = ref_dir / CALIBRATION
    if not folder.is_dir():
        return out
    for run in sorted(p for p in folder.iterdir() if p.is_dir()):
        if f"{ref_rel}/{CALIBRATION}/{run.name}/{TRACE}" in listed:
            out[run.name] = Trace.load(run / TRACE)
    return out


@dataclass(frozen=True)
class Step0Limit:
    rtol: float
    text: str  # how the limit was reached, for the evidence line


def relative_deviation(a: float, b: float) -> float:
    """|a - b| relative to |b| (the reference's value)."""
    return abs(a - b) / max(abs(b), 1e-12)


def _move(trace: Trace, key: str, reference: float) -> float | None:
    if not trace.applied:
        return None
    value = trace.applied[0].get(key)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return relative_deviation(value, reference)


def step0_limit(key: str, floor: float, reference: float, runs: dict[str, Trace]) -> Step0Limit:
    """The limit on the relative step-0 deviation of `key` ("loss" or "grad_norm")."""
    draws = [m for name, t in runs.items() if name.startswith("rng-")
             if (m := _move(t, key, reference)) is not None]
    if not runs:
        return Step0Limit(floor, f"floor {floor:g}; no calibration runs")
    rng = max(draws, default=0.0)
    bf16 = _move(runs["bf16"], key, reference) if "bf16" in runs else None
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
             if (m := _move(t, key, reference)) is not None]
    if not moves or max(moves) < UNMOVED:
        return None
    return Step0Limit(RNG_Z * max(moves), f"the gold's first batch is not the reference's, so the limit "
                      f"is {RNG_Z:g} x {max(moves):.3g} (another first batch at the reference's "
                      f"initial weights, {len(moves)} draws)")


def seeds_limit(key: str, reference: float, seeds: list[Trace]) -> Step0Limit:
    """The other-batch limit in references built before the start draws: each other reference
    seed is one more draw (its initial weights moved too), so RNG_Z x the largest seed's move."""
    moves = [m for t in seeds if (m := _move(t, key, reference)) is not None]
    spread = max(moves, default=0.0)
    return Step0Limit(RNG_Z * spread, f"the gold's first batch is not the reference's, so the limit is "
                      f"{RNG_Z:g} x the reference seeds' largest move {spread:.3g}")
