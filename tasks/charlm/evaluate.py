"""Harness-owned goal metric for charlm: validation cross-entropy (nats/char) of the checkpoint.

Uses the task's pristine project/ (never the migrated copy) for the model and data definitions.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "project"))
from data import load_splits  # noqa: E402
from model import CharTransformer  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    _, val, vocab = load_splits()
    model = CharTransformer(vocab)
    model.load_state_dict({k: v.cpu().float() for k, v in state["model"].items()})
    model.eval()
    block = model.block_size
    n = (len(val) - 1) // block
    x = val[: n * block].view(n, block)
    y = val[1: n * block + 1].view(n, block)
    with torch.no_grad():
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "val_loss", "value": loss}, f)
    print(f"val_loss {loss:.4f}")


if __name__ == "__main__":
    main()
