"""Stand-in ImageNet folders and a one-process launcher for microsoft/Swin-Transformer.

Data: data/standin/{train,val}/<class>/*.png, the layout main.py reads with `--data-path`
(data/build.py: torchvision ImageFolder over DATA_PATH/train and DATA_PATH/val). Ten classes of
32x32 RGB images (task_kit.class_images: each class its own mean colour and a brighter square at its
own place, with pixel noise): 640 training images (twenty steps of 32, drop_last) and 64
validation images. Deterministic.

Launcher (harness-owned, protected): gpu2tpu_launch.py stands in for
`python -m torch.distributed.launch --nproc_per_node 1`: it sets the environment that launcher gives
its one worker (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; config.py reads LOCAL_RANK on
PyTorch 2, main.py reads RANK and WORLD_SIZE and initialises the process group from env://), then
runs main.py unchanged with its own arguments. The sandbox gives every run its own loopback, so the
fixed port never collides.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the harness runs this with `python -I` (no script directory on sys.path): the kit is beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_kit import class_images, prepare_main  # noqa: E402

DATA = Path("data") / "standin"
LAUNCHER = "gpu2tpu_launch.py"
N_CLASSES, N_TRAIN, N_VAL = 10, 640, 64
SPLITS = {"train": (N_TRAIN, 1), "val": (N_VAL, 0)}  # name: (images, class_images seed)

LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Stands in for `python -m torch.distributed.launch --nproc_per_node 1`: the environment that
launcher gives its single worker, then the project's script, unchanged:
python {name} SCRIPT ARGS...
"""
import os
import runpy
import sys

for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"),
                   ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29517")):
    os.environ.setdefault(key, value)

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def class_name(c: int) -> str:
    return f"n{c:08d}"  # ImageNet-style synset folder names; ImageFolder sorts them


def write(root: Path) -> None:
    from PIL import Image

    for split, (n, seed) in SPLITS.items():
        data, labels = class_images(n, seed, classes=N_CLASSES)
        for c in range(N_CLASSES):  # every class folder exists, even one with no image
            (root / DATA / split / class_name(c)).mkdir(parents=True, exist_ok=True)
        for i, (img, c) in enumerate(zip(data, labels)):
            out = root / DATA / split / class_name(c) / f"{split}_{i:05d}.png"
            Image.fromarray(img.transpose(1, 2, 0)).save(out)
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(name=LAUNCHER))


if __name__ == "__main__":
    prepare_main(write, "microsoft/Swin-Transformer")
