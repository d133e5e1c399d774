"""Goal metric for HobbitLong/RepDistiller: accuracy of the distilled ResNet-8 student on held-out
stand-in CIFAR-100 images (the ten fine labels prepare.py uses).

Builds resnet8(num_classes=100) from the pristine project and loads the trained weights: the probe
saves the module that owns the optimizer's parameters, which may be the ModuleList holding the
student (keys `0.`-prefixed, the teacher's under `1.` if present); the student's entries are kept.
Twenty steps leave BatchNorm's running statistics (momentum 0.1) 12% at their initial values, so
they are first re-estimated (cumulative average, no gradient, weights unchanged) on the 320
training images; then 500 held-out images (a seed the training files do not use), normalised as
the project's test transform, are scored.
"""

from __future__ import annotations

import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the kit (run with -I)
from task_kit import (  # noqa: E402
    Checkpoint,
    GoalUnavailable,
    class_images,
    evaluate_goal,
    recalibrate_batchnorm,
)

MEAN, STD = (0.5071, 0.4867, 0.4408), (0.2675, 0.2565, 0.2761)  # dataset/cifar100.py's Normalize
N_HELD_OUT, HELD_OUT_SEED, USED_CLASSES = 500, 777, 10


def measure(ckpt: Checkpoint) -> float:
    import numpy as np
    import torch
    from models import model_dict  # the pristine, verified tree

    def tensors(data: np.ndarray) -> torch.Tensor:
        x = torch.from_numpy(data.reshape(-1, 3, 32, 32).astype(np.float32) / 255.0)
        return (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)

    state = ckpt.state()
    if "fc.weight" not in state:  # a ModuleList around the student: its first entry
        state = {k[2:]: v for k, v in state.items() if k.startswith("0.")}
    if "fc.weight" not in state:
        raise GoalUnavailable("no student (resnet8) weights in the checkpoint")
    torch.manual_seed(0)
    model = model_dict["resnet8"](num_classes=100)
    model.load_state_dict(state)
    assert ckpt.project is not None
    with open(ckpt.project / "data" / "cifar-100-python" / "train", "rb") as fh:
        train = pickle.load(fh, encoding="latin1")["data"]
    recalibrate_batchnorm(model, torch.split(tensors(train), 64))
    with torch.no_grad():
        data, labels = class_images(N_HELD_OUT, HELD_OUT_SEED, classes=USED_CLASSES)
        pred = model(tensors(data)).argmax(dim=1)
    return float((pred == torch.tensor(labels)).float().mean())


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
