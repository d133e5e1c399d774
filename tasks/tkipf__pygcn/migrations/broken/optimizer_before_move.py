"""Replaces each .cuda() by .to(xla_device) in place, as on CUDA: but the optimizer was built
before the move, and moving a module to XLA makes new parameters, so Adam keeps updating the old
CPU copies while the model trains nothing (exit 0)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("pygcn_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.move_to_xla(r, move_model_first=False)
    r.replace(gold.TRAIN, "print('Epoch: {:04d}'.format(epoch+1),",
              "if epoch + 1 == args.epochs: print('Epoch: {:04d}'.format(epoch+1),")
