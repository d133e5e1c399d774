"""Every edit of the gold but the loss log: the original's `train_loss.append(loss.item())` stays,
one host read per training step."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("informer_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.to_xla(r)
