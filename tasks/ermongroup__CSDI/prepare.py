"""Stand-in PhysioNet 2012 (set-a) and a small config for ermongroup/CSDI.

exe_physio.py reads every `data/physio/set-a/<6 digits>.txt` (the challenge's per-patient files:
a `Time,Parameter,Value` header, then one row per measurement, time as HH:MM over 48 hours) and
keeps the last value of each of 35 attributes per hour. The real set-a needs a PhysioNet download;
this writes patients of the same format whose attributes are learnable from one another:

- each patient has three latent factors and a daily rhythm; each attribute is its own mix of them
  plus noise, in its own units, measured in an hour with its own probability (5% to 60%: as in
  set-a, most of the 48 x 35 grid is missing), sometimes twice in one hour;
- data/physio/set-a: 160 patients, what `exe_physio.py` trains on (its split: 112 training, 16
  validation, 32 test patients; 7 batches of 16 per epoch);
- gpu2tpu_heldout/physio/set-a: 64 other patients for evaluate.py (read with the project's own
  Physio_Dataset, from that folder as its working directory);
- config/gpu2tpu_tiny.yaml: base.yaml with 3 epochs, two residual layers of 32 channels and 4
  heads, and 20 diffusion steps instead of 50 (the imputation after training, and evaluate.py's
  validation loss, walk every step; base.yaml's beta schedule and learning rate are kept).

Deterministic (numpy seeds 0 and 1).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import prepare_main, require  # noqa: E402

ATTRIBUTES = ["DiasABP", "HR", "Na", "Lactate", "NIDiasABP", "PaO2", "WBC", "pH", "Albumin", "ALT",
              "Glucose", "SaO2", "Temp", "AST", "Bilirubin", "HCO3", "BUN", "RespRate", "Mg", "HCT",
              "SysABP", "FiO2", "K", "GCS", "Cholesterol", "NISysABP", "TroponinT", "MAP",
              "TroponinI", "PaCO2", "Platelets", "Urine", "NIMAP", "Creatinine", "ALP"]
HOURS, FACTORS = 48, 3
SETS = {Path("data") / "physio" / "set-a": (160, 0, 132539),
        Path("gpu2tpu_heldout") / "physio" / "set-a": (64, 1, 142539)}  # folder: (patients, seed, first id)

CONFIG_TEXT = """\
#type: args

train:
  epochs: 3
  batch_size: 16
  lr: 1.0e-3
  itr_per_epoch: 1.0e+8


diffusion:
  layers: 2
  channels: 32
  nheads: 4
  diffusion_embedding_dim: 64
  beta_start: 0.0001
  beta_end: 0.5
  num_steps: 20
  schedule: "quad"
  is_linear: False

model:
  is_unconditional: 0
  timeemb: 64
  featureemb: 16
  target_strategy: "random"
"""


def patient_rows(rng, attrs: dict[str, tuple]) -> list[str]:
    import numpy as np

    z = rng.normal(size=FACTORS)
    phase, trend = rng.uniform(0, 2 * np.pi), rng.normal()
    rows = ["Time,Parameter,Value", "00:00,RecordID,0", f"00:00,Age,{int(rng.integers(18, 90))}"]
    for hour in range(HOURS):
        for name in ATTRIBUTES:
            mean, scale, loading, rhythm, p_seen = attrs[name]
            for _ in range(int(rng.random() < p_seen) + int(rng.random() < p_seen / 4)):
                daily = rhythm * np.sin(2 * np.pi * hour / 24 + phase)
                signal = loading @ z + daily + 0.3 * trend * hour / HOURS
                value = mean + scale * (signal + 0.25 * rng.normal())
                rows.append(f"{hour:02d}:{int(rng.integers(0, 60)):02d},{name},{value:.2f}")
    return rows


def write(root: Path) -> None:
    import numpy as np

    require(root, "exe_physio.py", "dataset_physio.py", "config/base.yaml")
    gen = np.random.default_rng(0)  # the attributes: one set of units and loadings for both folders
    attrs = {name: (float(gen.uniform(1, 200)), float(gen.uniform(0.5, 20)), gen.normal(size=FACTORS),
                    float(gen.uniform(0, 1)), float(gen.uniform(0.05, 0.6))) for name in ATTRIBUTES}
    for folder, (patients, seed, first_id) in SETS.items():
        out = root / folder
        out.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed + 1)
        for i in range(patients):
            record = first_id + i
            rows = patient_rows(rng, attrs)
            rows[1] = f"00:00,RecordID,{record}"
            (out / f"{record}.txt").write_text("\n".join(rows) + "\n")
    (root / "config" / "gpu2tpu_tiny.yaml").write_text(CONFIG_TEXT)


if __name__ == "__main__":
    prepare_main(write, "ermongroup/CSDI")
