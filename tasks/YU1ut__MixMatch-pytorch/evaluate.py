"""Goal metric for YU1ut/MixMatch-pytorch: accuracy of the EMA model (the model MixMatch reports,
`ema_state_dict` of the script's checkpoint) on 1000 held-out stand-in CIFAR-10 images (a generator
seed the training files do not use), normalised as dataset/cifar10.py normalises its inputs. The
model is the pristine project's WideResNet at the stand-in size prepare.py's launcher gives it."""

from __future__ import annotations

import os
import sys

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_kit import Checkpoint, GoalUnavailable, class_images, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED = 1000, 777


def measure(ckpt: Checkpoint) -> float:
    import torch
    from dataset.cifar10 import cifar10_mean, cifar10_std  # the pristine, verified tree
    from models.wideresnet import WideResNet
    from prepare import DEPTH, WIDEN

    state = ckpt.state("ema_state_dict", as_float=True)
    if "fc.weight" not in state:
        raise GoalUnavailable("the checkpoint's ema_state_dict holds no classifier")
    model = WideResNet(num_classes=10, depth=DEPTH, widen_factor=WIDEN)
    model.load_state_dict(state)
    model.eval()
    data, labels = class_images(N_HELD_OUT, HELD_OUT_SEED)
    mean = torch.tensor(cifar10_mean).view(1, 3, 1, 1) * 255.0
    std = torch.tensor(cifar10_std).view(1, 3, 1, 1) * 255.0
    with torch.no_grad():
        pred = model((torch.from_numpy(data).float() - mean) / std).argmax(dim=1)
    return float((pred == torch.tensor(labels)).float().mean())


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
