"""Goal metric for akamaster/pytorch_resnet_cifar10: accuracy of the trained ResNet-20 on held-out
stand-in CIFAR-10 images.

Builds resnet20 from the pristine project at --project, loads the trained state_dict from
--checkpoint (`module.` prefixes of the DataParallel wrapper stripped) and scores 1000 held-out
images drawn by prepare.py's generator (the kit's `class_images`) with a seed the training files do
not use, normalised as the trainer's validation transform does. One epoch of 10 steps leaves
BatchNorm's running statistics (momentum 0.1) at about 65% of their values, so evaluation with them
is mostly noise (measured: validation loss ~2900, 17% precision for gold and reference alike); the
statistics are first re-estimated (cumulative average, no gradient, weights unchanged) on the
project's 320 stand-in training images, so the metric measures the trained weights.
"""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # task_kit.py and prepare.py (-P run)
import task_kit
from prepare import BASE, SIDE, TRAIN_FILES  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]  # the trainer's Normalize
N_HELD_OUT, HELD_OUT_SEED = 1000, 777


def tensors(data: np.ndarray) -> torch.Tensor:
    x = torch.from_numpy(data.reshape(-1, 3, SIDE, SIDE).astype(np.float32) / 255.0)
    return (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def measure(ckpt: task_kit.Checkpoint) -> float:
    import resnet  # the pristine, verified tree

    torch.manual_seed(0)
    model = resnet.resnet20()
    model.load_state_dict(ckpt.state(as_float=True))

    train = []
    for i in range(1, TRAIN_FILES + 1):
        with open(os.path.join(ckpt.project, BASE, f"data_batch_{i}"), "rb") as fh:
            train.append(pickle.load(fh, encoding="latin1")["data"])
    task_kit.recalibrate_batchnorm(model, torch.split(tensors(np.concatenate(train)), 64))
    with torch.no_grad():
        data, labels = task_kit.class_images(N_HELD_OUT, HELD_OUT_SEED)
        pred = model(tensors(data)).argmax(dim=1)
        acc = float((pred == torch.tensor(labels)).float().mean())
    print(f"accuracy {acc:.4f}")
    return acc


if __name__ == "__main__":
    task_kit.evaluate_goal("accuracy", measure)
