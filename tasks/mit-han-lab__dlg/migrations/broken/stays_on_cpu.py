"""Adds the XLA import and syncs of the gold but never changes the device: the attack runs on the
CPU."""


def apply(r):
    r.insert_after("main.py", "import torch", ["import torch_xla"])
    r.gold.init_on_host(r)
