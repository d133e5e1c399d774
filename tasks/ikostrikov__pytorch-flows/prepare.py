"""Stand-in POWER data for ikostrikov/pytorch-flows: data/power/data.npy.

The project's loader (datasets/power.py) reads one float array of shape (N, 8), the UCI household
power columns (active power, reactive power, voltage, intensity, three sub-meterings, time),
shuffles it, drops columns 1 and 3, adds dequantisation noise, splits 10% test and 10% of the rest
validation and standardises. The stand-in has the same layout: 2530 rows (2050 training rows, so a
batch of 100 leaves a ragged last batch of 50, as the real data leaves one) driven by two latent factors, with
skewed, integer-valued and nonlinearly coupled columns, so a few MAF steps learn real structure.
Deterministic (numpy seed 0).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this copy (run with -P)
from task_kit import prepare_main  # noqa: E402

N_ROWS = 2530


def rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z1, z2 = rng.normal(size=n), rng.normal(size=n)
    minute = rng.integers(0, 1440, size=n).astype(np.float64)
    day = np.sin(2 * np.pi * minute / 1440.0)
    active = np.exp(0.6 * z1 + 0.4 * day)
    reactive = 0.1 * active + 0.05 * rng.random(n)
    voltage = 240.0 + 2.0 * z2 - 1.5 * active + 0.3 * rng.normal(size=n)
    intensity = active * 4.2 + 0.2 * rng.normal(size=n)
    sub1 = np.rint(np.maximum(0.0, 8.0 * np.tanh(z1 + z2) + rng.normal(size=n)))
    sub2 = np.rint(np.maximum(0.0, 3.0 * active * (1 + day) + rng.normal(size=n)))
    sub3 = np.rint(np.clip(10.0 + 6.0 * z2 * np.abs(day) + rng.normal(size=n), 0.0, 30.0))
    return np.stack([active, reactive, voltage, intensity, sub1, sub2, sub3, minute], axis=1)


def write(root: Path) -> None:
    out = root / "data" / "power"
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "data.npy", rows(N_ROWS, 0))


if __name__ == "__main__":
    prepare_main(write, "ikostrikov/pytorch-flows")
