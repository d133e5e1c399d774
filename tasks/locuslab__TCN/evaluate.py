"""Harness-owned goal metric for locuslab__TCN (adding problem): test MSE of the trained TCN.

The model is built from the pristine upstream tree (--project) with the task's configuration; the
held-out adding-problem data is generated here from a fixed seed (our own generator, same task
definition: two marked positions, the target is the sum of their values).
"""
import argparse
import json
import os
import sys

import numpy as np
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--project", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, os.path.abspath(args.project))
    from TCN.adding_problem.model import TCN

    model = TCN(2, 1, [NHID] * LEVELS, kernel_size=KSIZE, dropout=0.0)
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v.float() for k, v in state.items()}
    model.load_state_dict(state)
    model.eval()
    x, y = adding_data(N_TEST, SEQ_LEN, seed=12345)
    with torch.no_grad():
        mse = torch.nn.functional.mse_loss(model(x), y).item()
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "test_mse", "value": mse}, f)
    print(f"test_mse {mse:.6f}")


if __name__ == "__main__":
    main()
