"""The naive migration: the device becomes XLA and nothing else changes (LeNet initialised on the
host, as in the gold), so LBFGS's dummy image and label, and its history of directions, live on the
device: almost every closure evaluation is a new graph."""


def apply(r):
    r.insert_after("main.py", "import torch", ["import torch_xla"])
    r.replace("main.py", 'device = "cpu"', "device = torch_xla.device()")
    r.gold.init_on_host(r)
