"""Broken: the gold migration, but the running loss is still read with loss.item() every step."""
import importlib.util
from pathlib import Path

SCRIPT = "TCN/adding_problem/add_test.py"


def _gold():
    spec = importlib.util.spec_from_file_location("tcn_gold", Path(__file__).resolve().parents[1] / "gold.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def apply(r):
    _gold().apply(r)
    r.replace(SCRIPT, "total_loss += loss.detach()", "total_loss += loss.item()")
