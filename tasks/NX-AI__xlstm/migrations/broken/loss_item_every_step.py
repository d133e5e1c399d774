"""Every edit of the gold but the running loss: the original's `loss.item()` stays, one host read
per training step."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("xlstm_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.to_xla(r)
