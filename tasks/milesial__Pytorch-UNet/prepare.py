"""Stand-in Carvana for milesial/Pytorch-UNet, and the harness-owned launcher that runs train.py.

train.py reads ./data/imgs/<id>.<ext> and ./data/masks/<id>_mask.<ext> (CarvanaDataset: the
mask suffix `_mask`; the extension is globbed), as Kaggle's train_hq.zip (RGB .jpg) and
train_masks.zip (.gif masks whose pixels are 0 or 1) unpack there. Here: 40 pairs of 64 x 64
pixels, each a "car" (a rounded body of a random saturated colour, with a darker cabin band and
two dark wheels, at a random place and size) on a smooth, noisy grey background; the mask is 1 on
the car's pixels. The command's --scale 0.25 brings them to 16 x 16 in the project's own
preprocess (BICUBIC for images, NEAREST for masks). Deterministic (one numpy generator).

run_unet.py (protected, like the data) runs train.py unchanged after putting a stand-in `wandb`
module in sys.modules: the project logs to Weights & Biases (`wandb.init(..., anonymous='must')`
needs the network, and no wandb release installs beside this torch without changing protobuf).
The stand-in keeps every call train.py makes (init -> a run with config.update and log,
Histogram, Image) and records nothing; train.py still computes every value it hands to it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from task_kit import prepare_main

N_PAIRS, SIDE = 40, 64
LAUNCHER = "run_unet.py"

LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

python run_unet.py SCRIPT ARGS...: a stand-in `wandb` (no network here; nothing is recorded) is put
in sys.modules, then SCRIPT runs unchanged as __main__ with ARGS.
"""
import runpy
import sys
import types


class _Config(dict):
    def update(self, *args, **kwargs):
        dict.update(self, *args, **kwargs)


class _Run:
    def __init__(self):
        self.config = _Config()

    def log(self, data, *args, **kwargs):
        return None

    def finish(self, *args, **kwargs):
        return None


class _Media:
    def __init__(self, data, *args, **kwargs):
        self.data = data


def _init(*args, **kwargs):
    return _Run()


_wandb = types.ModuleType("wandb")
_wandb.init = _init
_wandb.Histogram = _Media
_wandb.Image = _Media
sys.modules["wandb"] = _wandb

script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
'''


def car(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One RGB image (SIDE, SIDE, 3) uint8 and its 0/1 mask (SIDE, SIDE) uint8."""
    yy, xx = np.mgrid[0:SIDE, 0:SIDE].astype(np.float64)
    # background: a smooth grey gradient with noise
    gx, gy = rng.uniform(-0.6, 0.6, size=2)
    base = 110.0 + rng.uniform(-25, 25) + gx * (xx - SIDE / 2) + gy * (yy - SIDE / 2)
    img = np.repeat(base[..., None], 3, axis=2) + rng.normal(0.0, 12.0, size=(SIDE, SIDE, 3))
    # body: a rounded rectangle (superellipse)
    cx, cy = rng.uniform(22, 42), rng.uniform(24, 40)
    ax, ay = rng.uniform(12, 20), rng.uniform(6, 10)
    body = (np.abs((xx - cx) / ax) ** 4 + np.abs((yy - cy) / ay) ** 4) <= 1.0
    # cabin: a smaller dome on top of the body
    dome = ((xx - cx) / (0.55 * ax)) ** 2 + ((yy - (cy - ay)) / (0.8 * ay)) ** 2 <= 1.0
    cabin = dome & (yy <= cy - 0.3 * ay)
    # wheels: two dark discs at the bottom of the body
    wheels = np.zeros_like(body)
    for wx in (cx - 0.6 * ax, cx + 0.6 * ax):
        wheels |= ((xx - wx) ** 2 + (yy - (cy + ay)) ** 2) <= (0.35 * ay + 1.5) ** 2
    colour = rng.uniform(0, 255, size=3)
    colour[rng.integers(3)] = rng.uniform(200, 255)  # a saturated channel
    img[body] = colour + rng.normal(0.0, 8.0, size=(int(body.sum()), 3))
    img[cabin] = 0.45 * colour + rng.normal(0.0, 8.0, size=(int(cabin.sum()), 3))
    img[wheels] = 25.0 + rng.normal(0.0, 6.0, size=(int(wheels.sum()), 3))
    mask = body | cabin | wheels
    return np.clip(img, 0, 255).astype(np.uint8), mask.astype(np.uint8)


def write(root: Path) -> None:
    from PIL import Image

    imgs, masks = root / "data" / "imgs", root / "data" / "masks"
    imgs.mkdir(parents=True, exist_ok=True)
    masks.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20240210)
    for i in range(N_PAIRS):
        img, mask = car(rng)
        name = f"standin{i:03d}_01"
        Image.fromarray(img, mode="RGB").save(imgs / f"{name}.jpg", quality=95)
        Image.fromarray(mask, mode="L").save(masks / f"{name}_mask.gif")
    (root / LAUNCHER).write_text(LAUNCHER_TEXT)


if __name__ == "__main__":
    prepare_main(write, "milesial/Pytorch-UNet")
