"""Stand-in multivariate series for zhouhaoyi/Informer2020, plus the launcher that runs it on numpy 2.

Writes data/standin/standin.csv in the ETT format the project's Dataset_Custom reads: a `date`
column (hourly from 2016-07-01 00:00), six load columns (HUFL, HULL, MUFL, MULL, LUFL, LULL) and
the target `OT`; 420 rows, which the loader splits 70/10/20 into train, validation and test. Each
column is a daily and a weekly sine of its own phase and amplitude plus a slow trend and noise, so
a few Adam steps learn something. Deterministic.

The project's EarlyStopping starts from `np.Inf`, which numpy 2 removed. The launcher
gpu2tpu_informer.py (harness-owned, protected) restores that alias, then runs the project's script
unchanged with its own arguments.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import task_kit

ROWS = 420
COLUMNS = ["HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"]
LAUNCHER = "gpu2tpu_informer.py"
LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Restores numpy's `np.Inf` alias (removed in numpy 2; the project's EarlyStopping uses it), then runs
the project's script unchanged: python {launcher} SCRIPT ARGS...
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
    rng = np.random.default_rng(2020)
    t = np.arange(ROWS, dtype=np.float64)
    cols = []
    for k in range(len(COLUMNS)):
        phase, amp = rng.uniform(0, 2 * np.pi, size=2), rng.uniform(1.0, 4.0)
        cols.append(amp * np.sin(2 * np.pi * t / 24 + phase[0])
                    + 0.5 * amp * np.sin(2 * np.pi * t / 168 + phase[1])
                    + 0.002 * (k + 1) * t + rng.normal(0.0, 0.3, ROWS) + 5.0 * k)
    return np.stack(cols, axis=1)


def write(root: Path) -> None:
    out = root / "data" / "standin"
    out.mkdir(parents=True, exist_ok=True)
    start, values = datetime(2016, 7, 1), series()
    lines = ["date," + ",".join(COLUMNS)]
    for i, row in enumerate(values):
        stamp = (start + timedelta(hours=i)).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(stamp + "," + ",".join(f"{v:.4f}" for v in row))
    (out / "standin.csv").write_text("\n".join(lines) + "\n")
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(launcher=LAUNCHER))


if __name__ == "__main__":
    task_kit.prepare_main(write, "zhouhaoyi/Informer2020")
