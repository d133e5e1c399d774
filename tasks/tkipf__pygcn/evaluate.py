"""Goal metric for tkipf/pygcn: test-split accuracy of the trained GCN on the stand-in Cora.

Builds the model and loads the data with the pristine project at --project (sparse adjacency on
the CPU, as upstream), loads the trained state_dict from --checkpoint, writes the accuracy on the
project's own test split (papers 500..1499) to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.project)
    from pygcn.models import GCN  # the pristine, verified tree
    from pygcn.utils import accuracy, load_data

    adj, features, labels, _, _, idx_test = load_data(
        path=os.path.join(args.project, "data", "cora") + os.sep)
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v for k, v in state.items()}
    nhid = state["gc1.weight"].shape[1]
    model = GCN(nfeat=features.shape[1], nhid=nhid, nclass=int(labels.max()) + 1, dropout=0.5)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        acc = float(accuracy(model(features, adj)[idx_test], labels[idx_test]))
    with open(args.out, "w") as fh:
        json.dump({"schema_version": 1, "metric": "accuracy", "value": acc}, fh)


if __name__ == "__main__":
    main()
