"""The gold migration, but the loss is still copied to the host as a numpy value every step
(L = E.detach().cpu().numpy()): a host synchronisation per step (exit 0, numerics fine)."""

import importlib.util
from pathlib import Path


def apply(r):
    spec = importlib.util.spec_from_file_location("dlrm_gold", Path(__file__).parents[1] / "gold.py")
    gold = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gold)
    gold.apply(r, loss_on_host=True)
