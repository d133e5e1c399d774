"""Another correct migration: the gold, with xm.optimizer_step(optimizer, barrier=True) (the step
and the graph cut in one call) in place of optimizer.step() followed by torch_xla.sync(), in both
stages."""


def apply(r):
    gold = r.gold
    gold.weight_norm_on_xla(r)
    gold.to_xla(r, barrier=False)
    gold.labels_on_device(r)
    r.replace_each(gold.UDA, gold.STEP, "xm.optimizer_step(optimizer, barrier=True)", count=2)
