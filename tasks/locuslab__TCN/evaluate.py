"""Harness-owned goal metric for locuslab__TCN (adding problem): test MSE of the trained TCN.

The model is built from the pristine upstream tree (--project) with the task's configuration; the
held-out adding-problem data is generated here from a fixed seed (our own generator, same task
definition: two marked positions, the target is the sum of their values).
"""

from __future__ import annotations

import numpy as np
import task_kit
import torch

SEQ_LEN, LEVELS, KSIZE, NHID = 24, 3, 3, 8     # must match task.yaml's command
N_TEST = 2000


def adding_data(n, seq_len, seed):
    rng = np.random.default_rng(seed)
    values = rng.random((n, seq_len)).astype(np.float32)
    marks = np.zeros((n, seq_len), dtype=np.float32)
    first = rng.integers(0, seq_len, n)
    second = (first + rng.integers(1, seq_len, n)) % seq_len      # a different position
    rows = np.arange(n)
    marks[rows, first] = 1.0
    marks[rows, second] = 1.0
    target = values[rows, first] + values[rows, second]
    x = torch.from_numpy(np.stack([values, marks], axis=1))
    return x, torch.from_numpy(target).unsqueeze(1)


def measure(ckpt: task_kit.Checkpoint) -> float:
    from TCN.adding_problem.model import TCN  # the pristine, verified tree

    model = TCN(2, 1, [NHID] * LEVELS, kernel_size=KSIZE, dropout=0.0)
    model.load_state_dict(ckpt.state(as_float=True))
    model.eval()
    x, y = adding_data(N_TEST, SEQ_LEN, seed=12345)
    with torch.no_grad():
        mse = torch.nn.functional.mse_loss(model(x), y).item()
    print(f"test_mse {mse:.6f}")
    return mse


if __name__ == "__main__":
    task_kit.evaluate_goal("test_mse", measure)
