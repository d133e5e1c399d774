"""Goal metric for tiedlm: validation cross-entropy (nats/char) of the checkpoint, with the task's
pristine project/ for the model and data definitions."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from task_kit import Checkpoint, evaluate_goal


def measure(ckpt: Checkpoint) -> float:
    from data import load_splits
    from model import GPT

    _, val, vocab = load_splits()
    model = GPT(vocab)
    model.load_state_dict(ckpt.state(as_float=True))
    model.eval()
    block = model.block_size
    n = (len(val) - 1) // block
    x, y = val[: n * block].view(n, block), val[1: n * block + 1].view(n, block)
    with torch.no_grad():
        logits, _ = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()


if __name__ == "__main__":
    evaluate_goal("val_loss", measure)
