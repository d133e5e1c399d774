"""Another correct migration: the gold, with xm.optimizer_step(optimizer, barrier=True) (the step
and the graph cut in one call) in place of optimizer.step() followed by torch_xla.sync()."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.MODELS, "optimizer.step()")])
    r.insert_after(gold.MODELS, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(gold.MODELS, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
