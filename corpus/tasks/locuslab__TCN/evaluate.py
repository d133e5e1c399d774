"""Goal metric for locuslab/TCN (adding problem): mean squared error on held-out sequences.

Builds the TCN with the pristine project's own code (ROOT/TCN), infers its size (levels, hidden
channels, kernel size) from the trained state_dict, and scores 2000 fresh sequences from the
project's own generator under a fixed seed that no training run uses.
Usage: python evaluate.py --checkpoint FILE --project ROOT --out FILE
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

SEQ_LEN = 50          # the task's --seq_len
EVAL_SEED = 20240607  # held-out sequences


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--project", required=True, help="pristine locuslab/TCN tree")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, os.path.abspath(args.project))
    from TCN.adding_problem.model import TCN
    from TCN.adding_problem.utils import data_generator

    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v.float() for k, v in state.items()}
    levels = len({k.split(".")[2] for k in state if k.startswith("tcn.network.")})
    nhid, _, ksize = state["tcn.network.0.conv1.weight_v"].shape
    model = TCN(2, 1, [nhid] * levels, kernel_size=ksize, dropout=0.0)
    model.load_state_dict(state)
    model.eval()
    torch.manual_seed(EVAL_SEED)
    np.random.seed(EVAL_SEED)
    x, y = data_generator(2000, SEQ_LEN)
    with torch.no_grad():
        mse = F.mse_loss(model(x), y).item()
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "mse", "value": mse}, f)
    print(f"test mse {mse:.5f}")


if __name__ == "__main__":
    main()
