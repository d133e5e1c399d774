"""The first training input's fingerprint (the probe's `init` event), compared: whether a run's
first batch is the reference's. Used by the numerics criterion (judge/invariants.py `check_init`,
the other-batch path of step 0) and when references are built (record/execution.py: a gold that
trains on another first batch gets the start draws of record/calibration.py), so it is
reference code.
"""

from __future__ import annotations

import math
from typing import Any

from gpu2tpu.record.trace import Trace


def gold_first_batch_deviation(ref: Trace, gold: Trace) -> float:
    """How far the gold migration's first training input is from the reference's (0 when either
    has no fingerprint or the shapes differ): above the limit, the project's data is not
    reproducible on the target under its seed (drawn from an unseeded or a device generator)."""
    r, g = ref.init or {}, gold.init or {}
    if "input_sum" not in r or "input_sum" not in g or g.get("input_shape") != r.get("input_shape"):
        return 0.0
    return input_deviation(r, g)


def input_deviation(r: dict, c: dict) -> float:
    """Largest difference of the input fingerprints, each in units of the reference's own scale."""
    scales = {"input_sum": math.sqrt(abs(r["input_sumsq"])), "input_sumsq": abs(r["input_sumsq"]),
              "input_wsum": math.sqrt(abs(r.get("input_wsumsq") or 0.0))}
    return max(_scaled(c.get(k), r[k], scale) for k, scale in scales.items())


def _scaled(value: Any, ref: float, scale: float) -> float:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return math.inf
    return abs(value - ref) / scale if scale > 0 else (0.0 if value == ref else math.inf)
