"""Broken: moves model and batches to XLA but keeps torch.nn.utils.weight_norm's fused kernel,
which has no XLA lowering: aten::_weight_norm_interface (and its backward) run on the CPU with
transfers for every convolution, every step."""
import importlib.util
from pathlib import Path


class _SkipTcnEdits:
    """Forwards the gold's edits except those to TCN/tcn.py."""

    def __init__(self, r):
        self.r = r

    def __getattr__(self, name):
        edit = getattr(self.r, name)
        return lambda path, *args: None if path == "TCN/tcn.py" else edit(path, *args)


def apply(r):
    spec = importlib.util.spec_from_file_location("tcn_gold", Path(__file__).resolve().parents[1] / "gold.py")
    gold = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gold)
    gold.apply(_SkipTcnEdits(r))
