"""Goal metric for ddp_mlp: held-out accuracy of the checkpoint, with the task's pristine
project/ for the model and data definitions."""

from __future__ import annotations

import torch
from task_kit import Checkpoint, evaluate_goal


def measure(ckpt: Checkpoint) -> float:
    from data import make_dataset
    from model import MLP

    model = MLP()
    model.load_state_dict(ckpt.state(as_float=True))
    x, y = make_dataset(n=2048, train=False).tensors
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
