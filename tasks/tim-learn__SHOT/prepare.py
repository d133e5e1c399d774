"""Stand-in USPS and MNIST for tim-learn/SHOT's digit experiment (digit/uda_digit.py --dset u2m),
and the harness-owned launcher that runs it.

uda_digit.py reads, relative to its folder digit/:
- ./data/usps/usps_28x28.pkl (data_load/usps.py): a gzip'd pickle ((train_images, train_labels),
  (test_images, test_labels)), images float in [0, 1] of shape (N, 1, 28, 28), labels int64;
- ./data/mnist/processed/training.pt and test.pt (data_load/mnist.py): torch.save'd tuples
  (data uint8 (N, 28, 28), targets int64 (N,)).
Both loaders' download() return at once when these files exist, so nothing is fetched.

The digits are drawn from a 5 x 7 bitmap font of our own, upsampled with bilinear interpolation
into a box of random size, place and slant, with pixel noise; the two domains differ the way USPS
and MNIST do: "USPS" digits are large and thick (a box of 20..24 x 14..18 pixels that fills the
frame, strokes dilated and blurred), "MNIST" digits are smaller, thinner and slanted (a box of
15..19 x 9..13 pixels, anywhere within a few pixels of the centre, shear up to 0.35). A LeNet
trained on the first reads the second with a visible loss of accuracy, which SHOT's adaptation
then recovers in part. Sizes (multiples of the command's batch size 32, so every batch is full):
USPS 320 training and 128 test images, MNIST 256 training (the unlabelled target domain SHOT
adapts on) and 256 test images (the project's own target test split, and evaluate.py's).
Deterministic (numpy generators with fixed seeds).

gpu2tpu_shot.py (protected, like the data) adjusts the run time and runs the script unchanged:
- DataLoader iterators get back their Python 2 alias `next` (uda_digit.py calls `it.next()`;
  torch dropped the alias in 1.13);
- `torch._six.string_classes` (str, bytes) is back: data_load/vision.py's VisionDataset tests the
  root against it (torch removed torch._six in 2.0);
- after the run it stores the three target-stage state_dicts the script saved
  (target_F/B/C_par_<cls_par>.pt under --output/seed<seed>/u2m/) byte for byte in one zip file,
  gpu2tpu_shot_target.zip, the task's checkpoint (the harness hands evaluate.py one file).
Usage: python gpu2tpu_shot.py SCRIPT ARGS...
"""

from __future__ import annotations

import gzip
import os
import pickle
import sys
from pathlib import Path

import numpy as np

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task_kit import prepare_main  # noqa: E402

SIDE = 28
SIZES = {"usps": (320, 128), "mnist": (256, 256)}  # (train, test)
LAUNCHER, BUNDLE = "gpu2tpu_shot.py", "gpu2tpu_shot_target.zip"

FONT = {  # 7 rows of 5 columns each
    0: (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    1: ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    2: (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    3: ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    4: ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    5: ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    6: ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    7: ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    8: (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    9: (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
}
GLYPHS = {d: np.array([[c == "#" for c in row] for row in rows], dtype=np.float64)
          for d, rows in FONT.items()}

LAUNCHER_TEXT = f'''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

python {LAUNCHER} SCRIPT ARGS...: DataLoader iterators get back their Python 2 alias `next` (the
script calls `it.next()`; torch dropped the alias in 1.13) and torch gets back `torch._six`
(data_load/vision.py tests `torch._six.string_classes`; gone since torch 2.0), the script runs
unchanged, then the target-stage state_dicts it saved (target_F/B/C_*.pt) are stored byte for
byte in {BUNDLE}.
"""
import glob
import os
import runpy
import sys
import types
import zipfile

import torch
from torch.utils.data import dataloader

dataloader._BaseDataLoaderIter.next = dataloader._BaseDataLoaderIter.__next__
torch._six = sys.modules["torch._six"] = types.ModuleType("torch._six")
torch._six.string_classes = (str, bytes)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")

saved = {{}}
for part in "FBC":
    found = glob.glob(os.path.join("**", "target_" + part + "_par_*.pt"), recursive=True)
    if len(found) == 1:
        saved[part] = found[0]
if len(saved) == 3:
    with zipfile.ZipFile(os.path.join(HERE, "{BUNDLE}"), "w", zipfile.ZIP_STORED) as bundle:
        for part, path in saved.items():
            bundle.write(path, arcname=part + ".pt")
else:
    print("{LAUNCHER}: the target-stage state_dicts were not all found:", saved, file=sys.stderr)
'''


def render(rng: np.random.Generator, digit: int, domain: str) -> np.ndarray:
    """One 28 x 28 image in [0, 1]."""
    glyph = GLYPHS[digit]
    if domain == "usps":
        h, w = int(rng.integers(20, 24)), int(rng.integers(14, 18))
        shear, jitter = rng.uniform(-0.1, 0.1), 1
    else:
        h, w = int(rng.integers(18, 22)), int(rng.integers(11, 15))
        shear, jitter = rng.uniform(-0.25, 0.25), 2
    top = (SIDE - h) // 2 + int(rng.integers(-jitter, jitter + 1))
    left = (SIDE - w) // 2 + int(rng.integers(-jitter, jitter + 1))
    rows, cols = np.mgrid[0:SIDE, 0:SIDE].astype(np.float64)
    centre = top + h / 2
    gy = (rows - top + 0.5) / h * 7 - 0.5
    gx = (cols - left - shear * (rows - centre) + 0.5) / w * 5 - 0.5
    padded = np.pad(glyph, 1)  # zeros around the glyph: bilinear reads fade to 0
    y0, x0 = np.floor(gy), np.floor(gx)
    fy, fx = gy - y0, gx - x0
    img = np.zeros((SIDE, SIDE))
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            yy = np.clip(y0 + dy + 1, 0, 8).astype(int)
            xx = np.clip(x0 + dx + 1, 0, 6).astype(int)
            inside = (y0 + dy >= -1) & (y0 + dy <= 7) & (x0 + dx >= -1) & (x0 + dx <= 5)
            img += wy * wx * padded[yy, xx] * inside
    if domain == "usps":  # thick, soft strokes: a 3 x 3 dilation, then a blur
        p = np.pad(img, 1)
        img = np.max([p[i:i + SIDE, j:j + SIDE] for i in range(3) for j in range(3)], axis=0)
        p = np.pad(img, 1)
        img = np.mean([p[i:i + SIDE, j:j + SIDE] for i in range(3) for j in range(3)], axis=0)
        img = np.clip(1.3 * img, 0, 1)
    else:  # thinner, sharper strokes
        img = np.clip((img - 0.2) / 0.5, 0, 1)
    img = img * rng.uniform(0.8, 1.0) + rng.normal(0.0, 0.05, img.shape)
    return np.clip(img, 0.0, 1.0)


def split(n: int, seed: int, domain: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 10
    rng.shuffle(labels)
    images = np.stack([render(rng, int(d), domain) for d in labels])
    return images, labels.astype(np.int64)


def write(root: Path) -> None:
    import torch

    digit = root / "digit"
    (n_tr, n_te) = SIZES["usps"]
    usps_tr, usps_te = split(n_tr, 1, "usps"), split(n_te, 2, "usps")
    usps = tuple((x[:, None].astype(np.float32), y) for x, y in (usps_tr, usps_te))
    (digit / "data" / "usps").mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(digit / "data" / "usps" / "usps_28x28.pkl", "wb", mtime=0) as f:
        pickle.dump(usps, f, protocol=2)
    (n_tr, n_te) = SIZES["mnist"]
    processed = digit / "data" / "mnist" / "processed"
    processed.mkdir(parents=True, exist_ok=True)
    for name, (n, seed) in {"training.pt": (n_tr, 3), "test.pt": (n_te, 4)}.items():
        x, y = split(n, seed, "mnist")
        data = torch.from_numpy(np.round(x * 255).astype(np.uint8))
        torch.save((data, torch.from_numpy(y)), processed / name)
    (digit / LAUNCHER).write_text(LAUNCHER_TEXT)


if __name__ == "__main__":
    prepare_main(write, "tim-learn/SHOT")
