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

from task_kit import class_images, prepare_main, torchvision_md5_launcher, write_pickles  # noqa: E402

CLASSES, PER_CLASS, TRAIN_FILES, N_TEST = 10, 48, 5, 100
LABEL_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]


def balanced(seed: int) -> tuple:
    """PER_CLASS images of every class, in the generator's order."""
    import numpy as np

    data, labels = class_images(4 * CLASSES * PER_CLASS, seed)
    lab = np.array(labels)
    keep = np.sort(np.concatenate([np.flatnonzero(lab == c)[:PER_CLASS] for c in range(CLASSES)]))
    assert len(keep) == CLASSES * PER_CLASS
    return data[keep].reshape(len(keep), -1), lab[keep].tolist()


def write(root: Path) -> None:
    data, labels = balanced(1)
    per_file = len(labels) // TRAIN_FILES
    files = {}
    for i in range(TRAIN_FILES):
        part = slice(i * per_file, (i + 1) * per_file)
        files[f"data_batch_{i + 1}"] = {
            "batch_label": f"training batch {i + 1} of {TRAIN_FILES}", "labels": labels[part],
            "data": data[part], "filenames": [f"standin_{i * per_file + k:05d}.png" for k in range(per_file)]}
    test, test_labels = class_images(N_TEST, 0)
    files["test_batch"] = {"batch_label": "testing batch 1 of 1", "labels": test_labels,
                           "data": test.reshape(N_TEST, -1),
                           "filenames": [f"standin_test_{k:05d}.png" for k in range(N_TEST)]}
    files["batches.meta"] = {"num_cases_per_batch": per_file, "label_names": LABEL_NAMES,
                             "num_vis": 3 * 32 * 32}
    md5 = write_pickles(root / "data" / "cifar-10-batches-py", files)
    torchvision_md5_launcher(root, "gpu2tpu_cifar10.py", md5)


if __name__ == "__main__":
    prepare_main(write, "kaidic/LDAM-DRW")
