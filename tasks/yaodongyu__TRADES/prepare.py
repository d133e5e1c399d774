"""Stand-in CIFAR-10 for yaodongyu/TRADES, and the two harness-owned launchers that run it.

train_trades_cifar10.py reads CIFAR-10 through torchvision from `../data`, relative to where it
runs: the task runs it in models/, so the data is data/cifar-10-batches-py/ of the tree. Written
here: data_batch_1..5 with 64 images each (320 training images, 20 steps of 16) and a test_batch
of 64, each class with its own colour and a brighter square at its own place, with pixel noise.

gpu2tpu_cifar10.py (the kit's md5 launcher) makes torchvision accept the stand-in files.
gpu2tpu_wrn.py sets the stand-in model size: main() builds `WideResNet()` with its defaults
(depth 34, widen factor 10: 46M parameters, far beyond a CPU reference) and has no flag for it, so
the launcher makes the defaults WRN-10-1 (one block per stage, 16/32/64 channels) and then runs
the script unchanged. evaluate.py builds the same size.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import task_kit  # noqa: E402

TRAIN_FILES, PER_FILE, N_TEST = 5, 64, 64
DEPTH, WIDEN = 10, 1  # the stand-in WideResNet (evaluate.py imports these)

WRN_LAUNCHER = f'''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

The stand-in model size: train_trades_cifar10.py builds `WideResNet()` with the defaults of
models/wideresnet.py (depth 34, widen factor 10); they become depth {DEPTH}, widen factor {WIDEN}.
Then it runs the project's script unchanged: python gpu2tpu_wrn.py SCRIPT ARGS...
"""
import runpy
import sys

from models import wideresnet

# WideResNet(depth, num_classes, widen_factor, dropRate)
wideresnet.WideResNet.__init__.__defaults__ = ({DEPTH}, 10, {WIDEN}, 0.0)

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def write(root: Path) -> None:
    files = task_kit.standin_cifar10(TRAIN_FILES, PER_FILE, N_TEST)
    md5 = task_kit.write_pickles(root / "data" / "cifar-10-batches-py", files)
    task_kit.torchvision_md5_launcher(root, "gpu2tpu_cifar10.py", md5)
    (root / "gpu2tpu_wrn.py").write_text(WRN_LAUNCHER)


if __name__ == "__main__":
    task_kit.prepare_main(write, "yaodongyu/TRADES")
