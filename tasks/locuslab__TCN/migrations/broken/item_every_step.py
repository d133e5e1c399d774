"""Broken: the gold migration, but the running loss still read with loss.item() every step.

One host read (and an extra wait for the device) per step, kept from the CUDA original.
"""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "tcn_gold", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gold.py"))
assert _spec is not None and _spec.loader is not None
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


class _KeepItem:
    def __init__(self, r):
        self.r = r

    def replace(self, path, anchor, new):
        if anchor != "total_loss += loss.item()":
            self.r.replace(path, anchor, new)

    def __getattr__(self, name):
        return getattr(self.r, name)


def apply(r):
    gold.apply(_KeepItem(r))
