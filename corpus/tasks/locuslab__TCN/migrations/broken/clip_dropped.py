"""Broken: the gold migration, but gradient clipping is switched off ("clip_grad_norm_ syncs on
XLA" is a common wrong belief); the --clip 0.5 of the command no longer has any effect."""
import importlib.util
from pathlib import Path

SCRIPT = "TCN/adding_problem/add_test.py"


def apply(r):
    spec = importlib.util.spec_from_file_location("tcn_gold", Path(__file__).resolve().parents[1] / "gold.py")
    gold = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gold)
    gold.apply(r)
    r.replace(SCRIPT, "if args.clip > 0:", "if False:  # clipping disabled for XLA")
