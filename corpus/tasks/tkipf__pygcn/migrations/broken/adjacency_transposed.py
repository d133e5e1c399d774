"""Broken: densifies the adjacency for XLA but multiplies by its transpose. pygcn row-normalises
A + I, so the transpose is a different operator (column sums instead of row averages): the model
runs without error and trains to different numbers."""
import importlib.util
from pathlib import Path

TRAIN = "pygcn/train.py"


def _gold():
    gold = Path(__file__).resolve().parents[1] / "gold.py"
    spec = importlib.util.spec_from_file_location("pygcn_gold", gold)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def apply(r):
    _gold().apply(r)
    r.replace(TRAIN, "adj = adj.to_dense().to(device)", "adj = adj.to_dense().t().contiguous().to(device)")
