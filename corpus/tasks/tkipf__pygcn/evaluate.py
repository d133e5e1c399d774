"""Goal metric for tkipf/pygcn: node-classification accuracy on the held-out test nodes.

Builds GCN and loads the stand-in Cora with the pristine project's own code (ROOT/pygcn), loads
the trained CPU state_dict and evaluates on idx_test (nodes 500..1499, never trained on).
pygcn numbers the classes in the iteration order of a Python set of strings, which depends on
the hash seed of the process; the class numbering of the training run is therefore recovered
from the model's own predictions on the training nodes (best one-to-one matching) first.
Usage: python evaluate.py --checkpoint FILE --project ROOT --out FILE
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--project", required=True, help="pristine tkipf/pygcn tree with stand-in data")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, os.path.abspath(args.project))
    from pygcn.models import GCN
    from pygcn.utils import load_data

    adj, features, labels, idx_train, _, idx_test = load_data(
        path=os.path.join(os.path.abspath(args.project), "data", "cora") + os.sep)
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v.float() for k, v in state.items()}
    n_class = int(labels.max()) + 1
    model = GCN(nfeat=features.shape[1], nhid=state["gc1.weight"].shape[1], nclass=n_class, dropout=0.5)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        pred = model(features, adj).argmax(1)
    confusion = np.zeros((n_class, n_class))
    np.add.at(confusion, (pred[idx_train].numpy(), labels[idx_train].numpy()), 1)
    rows, cols = linear_sum_assignment(-confusion)       # model class -> this process's class
    relabel = torch.as_tensor(cols[np.argsort(rows)])
    accuracy = (relabel[pred[idx_test]] == labels[idx_test]).float().mean().item()
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "accuracy", "value": accuracy}, f)
    print(f"test accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
