"""Goal metric for cifar_amp: test accuracy of the checkpoint, with the task's pristine project/
for the model and data definitions."""

from __future__ import annotations

import torch
from task_kit import Checkpoint, evaluate_goal


def measure(ckpt: Checkpoint) -> float:
    from data import SyntheticCIFAR
    from model import SmallResNet

    model = SmallResNet()
    model.load_state_dict(ckpt.state(as_float=True))
    model.eval()
    test = SyntheticCIFAR(n=1024, train=False)
    with torch.no_grad():
        return (model(test.images).argmax(1) == test.labels).float().mean().item()


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
