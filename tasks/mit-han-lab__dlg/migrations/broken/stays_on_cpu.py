"""Adds the XLA import and syncs of the gold but never changes the device: the attack runs on the
CPU."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("dlg_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    r.insert_after("main.py", "import torch", ["import torch_xla"])
    gold.init_on_host(r)
