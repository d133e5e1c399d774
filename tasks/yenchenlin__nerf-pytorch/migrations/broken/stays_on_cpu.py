"""The gold's edits, but the project's device line is kept: without CUDA it picks the CPU, so the
networks, the rays and every step run on the host, and the run succeeds."""


def apply(r):
    g = r.gold
    r.apply_gold(without=[(g.TRAIN, g.DEVICE_LINE)])
    r.insert_before(g.TRAIN, g.DEVICE_LINE, ["import torch_xla", "import torch_xla.core.xla_model as xm"])
