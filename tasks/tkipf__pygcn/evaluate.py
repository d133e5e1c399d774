"""Goal metric for tkipf/pygcn: test-split accuracy of the trained GCN on the stand-in Cora.

Builds the model and loads the data with the pristine project at --project (sparse adjacency on
the CPU, as upstream), loads the trained state_dict from --checkpoint, writes the accuracy on the
project's own test split (papers 500..1499) to --out.
"""

from __future__ import annotations

import os

import task_kit
import torch


def measure(ckpt: task_kit.Checkpoint) -> float:
    from pygcn.models import GCN  # the pristine, verified tree
    from pygcn.utils import accuracy, load_data

    adj, features, labels, _, _, idx_test = load_data(
        path=os.path.join(ckpt.project, "data", "cora") + os.sep)
    state = ckpt.state()
    nhid = state["gc1.weight"].shape[1]
    model = GCN(nfeat=features.shape[1], nhid=nhid, nclass=int(labels.max()) + 1, dropout=0.5)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        return float(accuracy(model(features, adj)[idx_test], labels[idx_test]))


if __name__ == "__main__":
    task_kit.evaluate_goal("accuracy", measure)
