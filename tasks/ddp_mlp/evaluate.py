"""Harness-owned goal metric for ddp_mlp: held-out accuracy of the saved checkpoint.

Uses the task's pristine project/ (never the migrated copy) for the model and data definitions.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "project"))
from data import make_dataset  # noqa: E402
from model import MLP  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    model = MLP()
    model.load_state_dict({k: v.cpu().float() for k, v in state.items()})
    x, y = make_dataset(n=2048, train=False).tensors
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "accuracy", "value": accuracy}, f)
    print(f"accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
