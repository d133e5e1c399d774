"""Stand-in Weather data for yuqinie98/PatchTST (PatchTST_supervised), plus the launcher that runs it on
numpy 2.

Writes PatchTST_supervised/dataset/weather.csv in the format of the Weather data set the project's
Dataset_Custom reads: a `date` column every ten minutes from 2020-01-01 00:10, twenty weather columns
and the target `OT`; 1200 rows, which the loader splits 70/10/20 into train, validation and test.
Each column is a daily and a slower sine of its own phase, amplitude and offset plus noise, some
columns lagged mixes of others, so a few Adam steps learn something. Deterministic.

The project's EarlyStopping starts from `np.Inf`, which numpy 2 removed. The launcher
PatchTST_supervised/gpu2tpu_patchtst.py (harness-owned, protected) restores that alias, then runs the
project's script unchanged with its own arguments.
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import prepare_main  # noqa: E402

ROWS, DAY = 1200, 144  # ten-minute steps
COLUMNS = ["p (mbar)", "T (degC)", "Tpot (K)", "Tdew (degC)", "rh (%)", "VPmax (mbar)", "VPact (mbar)",
           "VPdef (mbar)", "sh (g/kg)", "H2OC (mmol/mol)", "rho (g/m**3)", "wv (m/s)", "max. wv (m/s)",
           "wd (deg)", "rain (mm)", "raining (s)", "SWDR (W/m)", "PAR (umol/m/s)", "max. PAR (umol/m/s)",
           "Tlog (degC)", "OT"]
LAUNCHER = Path("PatchTST_supervised") / "gpu2tpu_patchtst.py"
LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Restores numpy's `np.Inf` alias (removed in numpy 2; the project's EarlyStopping uses it), then runs
the project's script unchanged: python gpu2tpu_patchtst.py SCRIPT ARGS...
"""
import runpy
import sys

import numpy as np

if not hasattr(np, "Inf"):
    np.Inf = np.inf
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def series() -> np.ndarray:
    rng = np.random.default_rng(2021)
    t = np.arange(ROWS, dtype=np.float64)
    base = []
    for _ in range(4):  # four latent drivers
        phase = rng.uniform(0, 2 * np.pi, size=2)
        base.append(np.sin(2 * np.pi * t / DAY + phase[0])
                    + 0.5 * np.sin(2 * np.pi * t / (3.5 * DAY) + phase[1]))
    cols = []
    for _ in COLUMNS:
        mix, lag = rng.normal(0.0, 1.0, size=4), int(rng.integers(0, 12))
        signal = sum(m * np.roll(b, lag) for m, b in zip(mix, base))
        cols.append(rng.uniform(1.0, 10.0) * signal + rng.normal(0.0, 0.3, ROWS) + rng.uniform(-50, 1000))
    return np.stack(cols, axis=1)


def write(root: Path) -> None:
    out = root / "PatchTST_supervised" / "dataset"
    out.mkdir(parents=True, exist_ok=True)
    start, values = datetime(2020, 1, 1, 0, 10), series()
    lines = ["date," + ",".join(f'"{c}"' if "," in c else c for c in COLUMNS)]
    for i, row in enumerate(values):
        stamp = (start + timedelta(minutes=10 * i)).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(stamp + "," + ",".join(f"{v:.3f}" for v in row))
    (out / "weather.csv").write_text("\n".join(lines) + "\n")
    (root / LAUNCHER).write_text(LAUNCHER_TEXT)


if __name__ == "__main__":
    prepare_main(write, "yuqinie98/PatchTST")
