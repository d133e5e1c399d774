"""Broken: the gold migration, but the running loss still reads loss.item() every batch."""
import importlib.util
from pathlib import Path

SCRIPT = "main_nbody.py"


def apply(r):
    gold = Path(__file__).resolve().parents[1] / "gold.py"
    spec = importlib.util.spec_from_file_location("egnn_gold", gold)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.apply(r)
    r.replace(SCRIPT, "res['loss'] += loss.detach()*batch_size", "res['loss'] += loss.item()*batch_size")
