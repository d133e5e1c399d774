"""The gold migration, but the per-epoch log line keeps its four .item() reads: a host
synchronisation every step (exit 0, numerics fine)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("pygcn_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.move_to_xla(r)
