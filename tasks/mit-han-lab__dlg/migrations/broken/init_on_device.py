"""Every edit of the gold but the initialisation: LeNet moves to the XLA device first, so
`weights_init` draws its weights from the device's generator, not the seeded host one."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("dlg_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.to_xla(r)
