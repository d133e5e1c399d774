"""Goal metric for Diego999/pyGAT: test-split accuracy (papers 500..1499) of the trained dense GAT
on the stand-in Cora, with the pristine project's loader and model."""

from __future__ import annotations

from task_kit import Checkpoint, evaluate_goal


def measure(ckpt: Checkpoint) -> float:
    import os

    import torch
    from models import GAT
    from utils import accuracy, load_data

    data = os.path.join(str(ckpt.project), "data", "cora") + os.sep
    adj, features, labels, _, _, idx_test = load_data(path=data)
    state = ckpt.state()
    heads = sum(1 for k in state if k.startswith("attention_") and k.endswith(".W"))
    model = GAT(nfeat=features.shape[1], nhid=state["attention_0.W"].shape[1], nclass=int(labels.max()) + 1,
                dropout=0.6, alpha=0.2, nheads=heads)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        return float(accuracy(model(features, adj)[idx_test], labels[idx_test]))


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
