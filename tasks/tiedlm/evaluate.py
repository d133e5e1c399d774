"""Goal metric for tiedlm: validation cross-entropy (nats/char) of the checkpoint, with the task's
pristine project/ for the model and data definitions."""

from __future__ import annotations

from task_kit import Checkpoint, block_cross_entropy, evaluate_goal


def measure(ckpt: Checkpoint) -> float:
    from data import load_splits
    from model import GPT

    _, val, vocab = load_splits()
    model = GPT(vocab)
    model.load_state_dict(ckpt.state(as_float=True))
    return block_cross_entropy(model, val)


if __name__ == "__main__":
    evaluate_goal("val_loss", measure)
