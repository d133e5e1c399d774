"""Broken: densifies the sparse adjacency for XLA by hand from its indices only, so the values of
the row-normalised D^-1 (A + I) are lost: the model aggregates with the raw 0/1 matrix A + I.
It runs cleanly; the activations (and the loss from step 0 on) are on another scale."""
import importlib.util
from pathlib import Path

TRAIN = "pygcn/train.py"


def apply(r):
    gold = Path(__file__).resolve().parents[1] / "gold.py"
    spec = importlib.util.spec_from_file_location("pygcn_gold", gold)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.apply(r)
    r.replace(TRAIN, "adj = adj.to_dense().to(device)", [
        "adj = torch.zeros(adj.shape).index_put_(tuple(adj._indices()), torch.tensor(1.0))",
        "adj = adj.to(device)",
    ])
