"""Goal metric for varlen_cls: held-out accuracy of the checkpoint on padded sequences, with the
task's pristine project/ for the model and data definitions."""

from __future__ import annotations

import torch
from task_kit import Checkpoint, evaluate_goal
from torch.nn.utils.rnn import pad_sequence


def measure(ckpt: Checkpoint) -> float:
    from data import CountingDataset
    from model import BagClassifier

    model = BagClassifier()
    model.load_state_dict(ckpt.state(as_float=True))
    test = CountingDataset(n=1024, train=False)
    tokens = pad_sequence(test.seqs, batch_first=True, padding_value=0)
    with torch.no_grad():
        pred = model(tokens, (tokens != 0).float()).argmax(1)
    return (pred == torch.tensor(test.labels)).float().mean().item()


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
