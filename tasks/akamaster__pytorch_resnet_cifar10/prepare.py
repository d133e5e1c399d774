"""Stand-in CIFAR-10 for akamaster/pytorch_resnet_cifar10, plus the launcher that accepts it.

Writes data/cifar-10-batches-py/ in the format torchvision's CIFAR10 reads (python pickles with
`data`: uint8 array (N, 3072) in channel-major order, `labels`: list of ints, `batch_label`,
`filenames`; batches.meta with `label_names`): data_batch_1..5 with 64 images each (320 training
images) and test_batch with 64, from the kit's `class_images` (each class has its own mean colour
and a brighter square at a class-dependent position, with pixel noise, so a few SGD steps learn
it). Deterministic.

torchvision checks each file's md5 against the real CIFAR-10 and, failing that, downloads it (no
network in the sandbox). The launcher gpu2tpu_cifar10.py (harness-owned, protected) sets those
expected md5s to the ones of the files written here, so the integrity check still runs, against
the stand-in files, and then runs the project's script unchanged with its own arguments.
"""

from __future__ import annotations

from pathlib import Path

import task_kit

SIDE = 32
TRAIN_FILES, PER_FILE, N_TEST = 5, 64, 64
BASE = Path("data") / "cifar-10-batches-py"
LAUNCHER = "gpu2tpu_cifar10.py"


def write(root: Path) -> None:
    files = task_kit.standin_cifar10(TRAIN_FILES, PER_FILE, N_TEST)
    task_kit.torchvision_md5_launcher(root, LAUNCHER, task_kit.write_pickles(root / BASE, files))


if __name__ == "__main__":
    task_kit.prepare_main(write, "akamaster/pytorch_resnet_cifar10")
