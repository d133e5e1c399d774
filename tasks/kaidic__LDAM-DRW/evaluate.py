"""Goal metric for kaidic/LDAM-DRW: class-balanced accuracy (the mean of the ten per-class
accuracies, the project's own test measure) of the trained ResNet-32 with LDAM's normalised
classifier, on 1000 held-out stand-in images (a generator seed the training files do not use),
normalised as the script's validation transform does. The model is built by the pristine
project."""

from __future__ import annotations

import os
import sys

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task_kit import Checkpoint, class_images, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED = 1000, 777
MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)  # the script's Normalize


def measure(ckpt: Checkpoint) -> float:
    import torch
    from models.resnet_cifar import resnet32  # the pristine, verified tree

    model = resnet32(num_classes=10, use_norm=True)
    model.load_state_dict({k: v.float() for k, v in ckpt.state().items()})
    model.eval()
    data, labels = class_images(N_HELD_OUT, HELD_OUT_SEED)
    x = torch.from_numpy(data).float() / 255.0
    x = (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    y = torch.tensor(labels)
    with torch.no_grad():
        hit = model(x).argmax(dim=1) == y
    return float(torch.stack([hit[y == c].float().mean() for c in range(10)]).mean())


if __name__ == "__main__":
    evaluate_goal("balanced_accuracy", measure)
