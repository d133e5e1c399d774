"""Stand-in CIFAR-10 for akamaster/pytorch_resnet_cifar10, plus the launcher that accepts it.

Writes data/cifar-10-batches-py/ in the format torchvision's CIFAR10 reads (python pickles with
`data`: uint8 array (N, 3072) in channel-major order, `labels`: list of ints, `batch_label`,
`filenames`; batches.meta with `label_names`): data_batch_1..5 with 64 images each (320 training
images) and test_batch with 64. Each class has its own mean colour and a brighter square at a
class-dependent position, with pixel noise, so a few SGD steps learn it. Deterministic.

torchvision checks each file's md5 against the real CIFAR-10 and, failing that, downloads it (no
network in the sandbox). The launcher gpu2tpu_cifar10.py (harness-owned, protected) sets those
expected md5s to the ones of the files written here, so the integrity check still runs, against
the stand-in files, and then runs the project's script unchanged with its own arguments.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from pathlib import Path

import numpy as np

N_CLASSES, SIDE = 10, 32
TRAIN_FILES, PER_FILE, N_TEST = 5, 64, 64
BASE = Path("data") / "cifar-10-batches-py"
LAUNCHER = "gpu2tpu_cifar10.py"
LABEL_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]


def images(n: int, seed: int) -> tuple[np.ndarray, list[int]]:
    """n stand-in images (uint8, N x 3072, CIFAR's R-plane, G-plane, B-plane order) and labels."""
    palette = np.random.default_rng(1234).integers(40, 216, size=(N_CLASSES, 3))  # fixed per class
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, size=n)
    img = palette[labels][:, :, None, None] + rng.normal(0.0, 30.0, size=(n, 3, SIDE, SIDE))
    for k, c in enumerate(labels):
        r, q = divmod(int(c), 4)  # a brighter 10x10 square at a class-dependent place
        y, x = 2 + 8 * r, 2 + 7 * q
        img[k, :, y:y + 10, x:x + 10] += 60.0
    data = np.clip(np.rint(img), 0, 255).astype(np.uint8).reshape(n, 3 * SIDE * SIDE)
    return data, [int(c) for c in labels]


def batch(name: str, n: int, seed: int) -> dict:
    data, labels = images(n, seed)
    return {"batch_label": name, "labels": labels, "data": data,
            "filenames": [f"standin_{seed}_{i:05d}.png" for i in range(n)]}


LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Accepts the stand-in CIFAR-10 files: torchvision's CIFAR10 checks each file's md5 against the real
data set (and would download it otherwise); the expected md5s become those of the stand-in files,
so the check still runs. Then runs the project's script unchanged: python {launcher} SCRIPT ARGS...
"""
import runpy
import sys

import torchvision.datasets as datasets

MD5 = {md5!r}

cifar = datasets.CIFAR10
cifar.train_list = [[name, MD5[name]] for name, _ in cifar.train_list]
cifar.test_list = [[name, MD5[name]] for name, _ in cifar.test_list]
cifar.meta = {{**cifar.meta, "md5": MD5[cifar.meta["filename"]]}}

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def main(root: Path) -> None:
    out = root / BASE
    out.mkdir(parents=True, exist_ok=True)
    files = {f"data_batch_{i}": batch(f"training batch {i} of {TRAIN_FILES}", PER_FILE, i)
             for i in range(1, TRAIN_FILES + 1)}
    files["test_batch"] = batch("testing batch 1 of 1", N_TEST, 0)
    files["batches.meta"] = {"num_cases_per_batch": PER_FILE, "label_names": LABEL_NAMES,
                             "num_vis": 3 * SIDE * SIDE}
    md5 = {}
    for name, content in files.items():
        blob = pickle.dumps(content, protocol=2)
        (out / name).write_bytes(blob)
        md5[name] = hashlib.md5(blob).hexdigest()
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(launcher=LAUNCHER, md5=md5))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python prepare.py ROOT (the materialised akamaster/pytorch_resnet_cifar10 tree)")
    main(Path(sys.argv[1]))
