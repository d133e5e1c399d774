"""Goal metric for ermongroup/CSDI: the trained model's imputation loss on 64 held-out stand-in
patients (lower is better).

Builds the project's CSDI_Physio on the CPU from the prepared tree's config/gpu2tpu_tiny.yaml (as
exe_physio.py does: conditional, test missing ratio 0.1), loads the trained weights, and reads the
held-out patients with the project's own Physio_Dataset (working directory: a scratch folder whose
data/physio/set-a holds them, so the dataset's cache file lands there). Its loss is the project's
own validation loss, model(batch, is_train=0): the noise-prediction error on the held-out
ground-truth points, at every one of the config's 20 diffusion steps, with torch's generator seeded first
so that every checkpoint is measured on the same noise.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

HELDOUT = Path("gpu2tpu_heldout") / "physio" / "set-a"
CONFIG = Path("config") / "gpu2tpu_tiny.yaml"
MISSING_RATIO, SEED, BATCH = 0.1, 7, 16


def measure(ckpt: Checkpoint) -> float:
    import torch
    import yaml
    from dataset_physio import Physio_Dataset  # the pristine, prepared tree
    from main_model import CSDI_Physio
    from torch.utils.data import DataLoader

    config = yaml.safe_load((ckpt.project / CONFIG).read_text())
    config["model"]["is_unconditional"] = False
    config["model"]["test_missing_ratio"] = MISSING_RATIO
    model = CSDI_Physio(config, "cpu")
    try:
        model.load_state_dict(ckpt.state(as_float=True))
    except RuntimeError as exc:
        raise GoalUnavailable(f"the checkpoint does not load into CSDI_Physio: {exc}") from exc
    model.eval()
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data" / "physio"
        data.mkdir(parents=True)
        (data / "set-a").symlink_to((ckpt.project / HELDOUT).resolve())
        here = os.getcwd()
        os.chdir(scratch)
        try:
            loader = DataLoader(Physio_Dataset(missing_ratio=MISSING_RATIO, seed=SEED), batch_size=BATCH)
            torch.manual_seed(0)
            with torch.no_grad():
                losses = [float(model(batch, is_train=0)) for batch in loader]
        finally:
            os.chdir(here)
    loss = sum(losses) / len(losses)
    print(f"held-out imputation loss {loss:.5f} over {len(losses)} batches")
    return loss


if __name__ == "__main__":
    evaluate_goal("imputation_loss", measure)
