"""Stand-in CIFAR-10 for YU1ut/MixMatch-pytorch, and the two harness-owned launchers that run it.

dataset/cifar10.py reads CIFAR-10 through torchvision from ./data and splits the training set per
class: the first n_labeled/10 images of each class (after a numpy shuffle) are labelled, the last
500 of each class are the validation set, the rest is unlabelled. Written here:
data/cifar-10-batches-py/ with data_batch_1..5 holding 10 x (500 + LABELED + UNLABELED) images,
exactly that many of each class (task_kit.class_images: each class its own colour and a brighter
square at its own place, with pixel noise), and a test_batch of N_TEST.

gpu2tpu_cifar10.py (the kit's md5 launcher) makes torchvision accept the stand-in files and runs
gpu2tpu_mixmatch.py, which adjusts the run-time and then runs train.py unchanged:
- the stand-in model size: train.py builds `WideResNet(num_classes=10)` with the defaults of
  models/wideresnet.py (WRN-28-2, 1.5M parameters: about 6 s a step on two CPU cores) and has no
  flag for it; the launcher makes the defaults WRN-10-1 (one block per stage, 16/16/32/64
  channels). evaluate.py builds the same size.
- train.py calls `iterator.next()` on DataLoader iterators (Python 2 style); torch has not had
  that alias since 1.13, so the launcher gives the iterator class `next = __next__` back.
- utils/eval.py's accuracy() calls `.view(-1)` on a slice of a transposed tensor (refused by torch
  since 1.x): train.py imports an identical top-k accuracy that uses `.reshape(-1)`.
- the validation split keeps its first VAL_KEPT images (the project's split is computed as written,
  numpy's generator consumed exactly as upstream, then cut): 5000 validation images evaluated every
  epoch would cost far more than the training itself. The validation set only feeds the log and
  `best_acc`; the goal is measured by evaluate.py on its own held-out images.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import task_kit  # noqa: E402

CLASSES, VAL_PER_CLASS, LABELED, UNLABELED = 10, 500, 8, 16  # per class
TRAIN_FILES, N_TEST, VAL_KEPT = 5, 64, 64
DEPTH, WIDEN = 10, 1  # the stand-in WideResNet (evaluate.py imports these)
MD5_LAUNCHER, RUN_LAUNCHER = "gpu2tpu_cifar10.py", "gpu2tpu_mixmatch.py"

RUN_TEXT = f'''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Run-time adjustments, then train.py runs unchanged: python {RUN_LAUNCHER} SCRIPT ARGS...
- the stand-in model size: WideResNet's defaults (depth 28, widen factor 2) become depth {DEPTH},
  widen factor {WIDEN}.
- DataLoader iterators get back their Python 2 alias `next` (train.py calls `it.next()`; torch
  dropped the alias in 1.13).
- utils/eval.py's accuracy() calls `.view(-1)` on a slice of a transposed tensor, which torch has
  refused since 1.x; train.py's `from utils import accuracy` gets the same top-k accuracy with
  `.reshape(-1)`.
- the validation split keeps its first {VAL_KEPT} images: dataset/cifar10.py's train_val_split runs
  as written (numpy's generator consumed as upstream) and its validation indices are then cut.
"""
import runpy
import sys

from torch.utils.data import dataloader

import utils
from dataset import cifar10
from models import wideresnet

dataloader._BaseDataLoaderIter.next = dataloader._BaseDataLoaderIter.__next__

# WideResNet(num_classes, depth, widen_factor, dropRate): train.py builds WideResNet(num_classes=10)
wideresnet.WideResNet.__init__.__defaults__ = ({DEPTH}, {WIDEN}, 0.0)


def accuracy(output, target, topk=(1,)):
    _, pred = output.topk(max(topk), 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand(pred.size(1), -1))
    return [correct[:k].reshape(-1).float().sum(0).mul_(100.0 / target.size(0)) for k in topk]


utils.accuracy = utils.eval.accuracy = accuracy

_train_val_split = cifar10.train_val_split


def train_val_split(labels, n_labeled_per_class):
    labeled, unlabeled, val = _train_val_split(labels, n_labeled_per_class)
    return labeled, unlabeled, val[:{VAL_KEPT}]


cifar10.train_val_split = train_val_split

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def training_set():
    """10 x (500 + LABELED + UNLABELED) images, exactly that many of each class, in a fixed
    order (class_images draws labels at random: a larger draw, then the first of each class)."""
    import numpy as np

    per_class = VAL_PER_CLASS + LABELED + UNLABELED
    data, labels = task_kit.class_images(int(per_class * CLASSES * 1.25), seed=1)
    lab = np.asarray(labels)
    keep = np.sort(np.concatenate([np.flatnonzero(lab == c)[:per_class] for c in range(CLASSES)]))
    assert len(keep) == per_class * CLASSES, "too few images of a class"
    return data[keep], [int(c) for c in lab[keep]]


def write(root: Path) -> None:
    data, labels = training_set()
    files = task_kit.cifar10_files(task_kit.parts(data, labels, TRAIN_FILES),
                                   task_kit.class_images(N_TEST, 0))
    md5 = task_kit.write_pickles(root / "data" / "cifar-10-batches-py", files)
    task_kit.torchvision_md5_launcher(root, MD5_LAUNCHER, md5)
    (root / RUN_LAUNCHER).write_text(RUN_TEXT)


if __name__ == "__main__":
    task_kit.prepare_main(write, "YU1ut/MixMatch-pytorch")
