"""Calibration runs for step-0 tolerances: how far the reference's first step moves with nothing but the
random generator, and with each precision the task's policy allows, measured when the references
are built (record/execution.py `run_calibration`, the probe's record/probe_calibration.py).

A model with dropout (or noise drawn inside the step) moves its step-0 loss with the generator: a
correct migration draws those numbers on its device, so its step 0 is one more such draw. The
limit on a candidate's step-0 deviation is therefore measured, not configured: this module says
which calibration runs a bundle holds and reads them; judge/step0.py turns them into the limit.
"""

from __future__ import annotations

import math
from pathlib import Path

from gpu2tpu.record.report import TRACE
from gpu2tpu.record.trace import Trace
from gpu2tpu.tasks.spec import RunSpec

CALIBRATION = "calibration"  # the folder of a reference bundle that holds the calibration runs
CALIBRATE_ENV = "GPU2TPU_CALIBRATE"  # the probe's switch (record/probe.py reads it)
DRAWS = 4  # generator draws per task


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
            moved = step0_move(draw, key, r)
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


def relative_deviation(a: float, b: float) -> float:
    """|a - b| relative to |b| (the reference's value)."""
    return abs(a - b) / max(abs(b), 1e-12)


def step0_move(trace: Trace, key: str, reference: float) -> float | None:
    """How far a run's step-0 `key` moved from the reference's value (relative), None when it
    recorded none."""
    if not trace.applied:
        return None
    value = trace.applied[0].get(key)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return relative_deviation(value, reference)
