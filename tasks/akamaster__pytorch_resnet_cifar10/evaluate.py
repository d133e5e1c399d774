"""Goal metric for akamaster/pytorch_resnet_cifar10: accuracy of the trained ResNet-20 on held-out
stand-in CIFAR-10 images.

Builds resnet20 from the pristine project at --project, loads the trained state_dict from
--checkpoint (`module.` prefixes of the DataParallel wrapper stripped) and scores 1000 held-out
images drawn by prepare.py's generator with a seed the training files do not use, normalised as the
trainer's validation transform does. One epoch of 10 steps leaves BatchNorm's running statistics
(momentum 0.1) at about 65% of their values, so evaluation with them is mostly noise (measured:
validation loss ~2900, 17% precision for gold and reference alike); the statistics are first
re-estimated (cumulative average, no gradient, weights unchanged) on the project's 320 stand-in
training images, so the metric measures the trained weights.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # prepare.py's generator (-I run)
from prepare import BASE, SIDE, TRAIN_FILES, images  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]  # the trainer's Normalize
N_HELD_OUT, HELD_OUT_SEED = 1000, 777


def tensors(data: np.ndarray) -> torch.Tensor:
    x = torch.from_numpy(data.reshape(-1, 3, SIDE, SIDE).astype(np.float32) / 255.0)
    return (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.project)
    import resnet  # the pristine, verified tree

    torch.manual_seed(0)
    model = resnet.resnet20()
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v.float() for k, v in state.items()}
    model.load_state_dict(state)

    train = []
    for i in range(1, TRAIN_FILES + 1):
        with open(os.path.join(args.project, BASE, f"data_batch_{i}"), "rb") as fh:
            train.append(pickle.load(fh, encoding="latin1")["data"])
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the calibration batches
        model.train()
        for chunk in torch.split(tensors(np.concatenate(train)), 64):
            model(chunk)
        model.eval()
        data, labels = images(N_HELD_OUT, HELD_OUT_SEED)
        pred = model(tensors(data)).argmax(dim=1)
        acc = float((pred == torch.tensor(labels)).float().mean())
    with open(args.out, "w") as fh:
        json.dump({"schema_version": 1, "metric": "accuracy", "value": acc}, fh)
    print(f"accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
