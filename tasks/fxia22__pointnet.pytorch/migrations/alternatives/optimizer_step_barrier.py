"""Another correct migration: the gold's device, identities and per-epoch reads, but each step ends
with xm.optimizer_step(optimizer, barrier=True), which steps and cuts the graph, instead of
optimizer.step() and an explicit torch_xla.sync()."""

TRAIN = "utils/train_classification.py"


def apply(r):
    r.gold.move_to_xla(r)
    r.gold.identities_on_device(r)
    r.gold.reads_per_epoch(r)
    r.replace(TRAIN, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
