"""Another correct migration, in torch_xla's xla_model idioms: xm.xla_device(), xm.optimizer_step()
for Adam and xm.mark_step() after the EMA step instead of torch_xla.device() and torch_xla.sync(),
and the mixup permutation left where torch draws it (a CPU index tensor, which torch_xla moves when
it indexes the device batch). Meters, bar suffix and checkpoints as the gold."""

TRAIN = "train.py"


def apply(r):
    r.gold.xla_device(r, device="xm.xla_device()")
    r.gold.meters_on_device(r)
    r.replace(TRAIN, "optimizer.step()", "xm.optimizer_step(optimizer)")
    r.insert_after(TRAIN, "ema_optimizer.step()", ["xm.mark_step()"])
