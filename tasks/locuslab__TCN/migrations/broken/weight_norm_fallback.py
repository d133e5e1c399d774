"""Broken: everything on the XLA device, but nn.utils.weight_norm left as it is.

Its fused kernel (aten::_weight_norm_interface and its backward) has no XLA lowering and runs on
the CPU, with transfers, in every forward and backward.
"""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "tcn_gold", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gold.py"))
assert _spec is not None and _spec.loader is not None
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


class _NoWeightNormPatch:
    """Passes the gold's edits through, except the weight_norm module and its import."""

    def __init__(self, r):
        self.r = r

    def write(self, path, text):
        if not path.endswith("xla_weight_norm.py"):
            self.r.write(path, text)

    def insert_after(self, path, anchor, lines):
        lines = [x for x in lines if "xla_weight_norm" not in x]
        if lines:
            self.r.insert_after(path, anchor, lines)

    def __getattr__(self, name):
        return getattr(self.r, name)


def apply(r):
    gold.apply(_NoWeightNormPatch(r))
