"""Goal metric for yaodongyu/TRADES: natural accuracy of the adversarially trained WideResNet on
1000 held-out stand-in CIFAR-10 images (a generator seed the training files do not use), scaled
to [0, 1] as the script's ToTensor does. The model is the pristine project's WideResNet at the
stand-in size prepare.py's launcher gives it."""

from __future__ import annotations

import os
import sys

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_kit import Checkpoint, class_images, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED = 1000, 777


def measure(ckpt: Checkpoint) -> float:
    import torch
    from models.wideresnet import WideResNet  # the pristine, verified tree
    from prepare import DEPTH, WIDEN

    model = WideResNet(depth=DEPTH, widen_factor=WIDEN)
    model.load_state_dict({k: v.float() for k, v in ckpt.state().items()})
    model.eval()
    data, labels = class_images(N_HELD_OUT, HELD_OUT_SEED)
    with torch.no_grad():
        pred = model(torch.from_numpy(data).float() / 255.0).argmax(dim=1)
    return float((pred == torch.tensor(labels)).float().mean())


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
