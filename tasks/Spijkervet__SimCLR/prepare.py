"""Stand-in CIFAR-10 for Spijkervet/SimCLR, plus the launcher that accepts it.

Writes datasets/cifar-10-batches-py/ (main.py's default --dataset_dir is ./datasets) in the format
torchvision's CIFAR10 reads: data_batch_1..5 with 64 images each (320 training images, ten
optimizer steps in batches of 32 with drop_last) and a test_batch of 64, batches.meta with the
label names. Each class has its own mean colour and a brighter square at its own place, with pixel
noise (task_kit.class_images). Deterministic.

main.py builds torchvision.datasets.CIFAR10(..., download=True), which checks each file's md5
against the real data set and would download it otherwise (no network in the sandbox): the
harness-owned launcher gpu2tpu_cifar10.py (protected) expects the stand-in files' md5s instead and
runs main.py unchanged with its own arguments.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the harness runs this with `python -I` (no script directory on sys.path): the kit is beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import task_kit  # noqa: E402

BASE = Path("datasets") / "cifar-10-batches-py"
LAUNCHER = "gpu2tpu_cifar10.py"
TRAIN_FILES, PER_FILE, N_TEST = 5, 64, 64


def write(root: Path) -> None:
    files = task_kit.standin_cifar10(TRAIN_FILES, PER_FILE, N_TEST)
    md5 = task_kit.write_pickles(root / BASE, files)
    task_kit.torchvision_md5_launcher(root, LAUNCHER, md5)


if __name__ == "__main__":
    task_kit.prepare_main(write, "Spijkervet/SimCLR")
