"""Harness-owned goal metric for cifar_amp: test accuracy of the saved checkpoint.

Uses the task's pristine project/ (never the migrated copy) for the model and data definitions.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "project"))
from data import SyntheticCIFAR  # noqa: E402
from model import SmallResNet  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    model = SmallResNet()
    model.load_state_dict({k: v.cpu().float() for k, v in state.items()})
    model.eval()
    test = SyntheticCIFAR(n=1024, train=False)
    with torch.no_grad():
        pred = model(test.images).argmax(1)
    accuracy = (pred == test.labels).float().mean().item()
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "accuracy", "value": accuracy}, f)
    print(f"accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
