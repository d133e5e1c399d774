"""Stand-in CIFAR-10 for kaidic/LDAM-DRW, plus the launcher that accepts it.

cifar_train.py reads CIFAR-10 through torchvision from ./data (IMBALANCECIFAR10 subclasses
torchvision's CIFAR10, then keeps img_max * imb_factor**(c / 9) images of class c, img_max being
the training set's size over ten): data/cifar-10-batches-py/ holds data_batch_1..5 with 96 images
each, 48 of every class (balanced, as CIFAR-10 is, so the project's per-class counts are the
ones it keeps), and a test_batch of 100 (the validation loader's one batch). Each class has its
own colour and a brighter square at its own place, with pixel noise. gpu2tpu_cifar10.py (the
kit's md5 launcher) makes torchvision accept the stand-in files.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import task_kit  # noqa: E402

CLASSES, PER_CLASS, TRAIN_FILES, N_TEST = 10, 48, 5, 100


def balanced(seed: int) -> tuple:
    """PER_CLASS images of every class, in the generator's order."""
    import numpy as np

    data, labels = task_kit.class_images(4 * CLASSES * PER_CLASS, seed)
    lab = np.array(labels)
    keep = np.sort(np.concatenate([np.flatnonzero(lab == c)[:PER_CLASS] for c in range(CLASSES)]))
    assert len(keep) == CLASSES * PER_CLASS
    return data[keep].reshape(len(keep), -1), lab[keep].tolist()


def write(root: Path) -> None:
    data, labels = balanced(1)
    files = task_kit.cifar10_files(task_kit.parts(data, labels, TRAIN_FILES),
                                   task_kit.class_images(N_TEST, 0))
    md5 = task_kit.write_pickles(root / "data" / "cifar-10-batches-py", files)
    task_kit.torchvision_md5_launcher(root, "gpu2tpu_cifar10.py", md5)


if __name__ == "__main__":
    task_kit.prepare_main(write, "kaidic/LDAM-DRW")
