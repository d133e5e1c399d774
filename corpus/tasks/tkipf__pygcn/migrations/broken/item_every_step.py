"""Broken: the gold migration, but the per-epoch log line stays, reading four scalars
(loss_train.item() ...) on the host every epoch."""
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
    r.replace(TRAIN, "if epoch + 1 == args.epochs: print('Epoch: {:04d}'.format(epoch+1),",
              "print('Epoch: {:04d}'.format(epoch+1),")
