"""Another correct migration: the optimizer steps through xm.optimizer_step(optim, barrier=True),
which marks the step itself, instead of optim.step() followed by torch_xla.sync(); the rest as the
gold. (MpDeviceLoader is not used: its background thread would crop the next batches with numpy's
global generator while the training thread draws the frequency masks from it, so the draws would
interleave differently from the original and from run to run.)"""


def apply(r):
    r.apply_gold(without=[(r.gold.MAIN, "optim.step()")])
    r.insert_after(r.gold.MAIN, "import torch.nn as nn", ["import torch_xla.core.xla_model as xm"])
    r.replace(r.gold.MAIN, "optim.step()", "xm.optimizer_step(optim, barrier=True)")
