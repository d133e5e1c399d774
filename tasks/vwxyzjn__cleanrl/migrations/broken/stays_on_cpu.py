"""Every edit of the gold, but the device line keeps the CUDA test
(`"cuda" if torch.cuda.is_available() and args.cuda else "cpu"`): with no GPU the agent, the
buffers and the training stay on the CPU (exit 0)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("cleanrl_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")')
    gold.clipfrac_on_device(r)
