"""Another correct migration: the gold's device, moves, meters and checkpoints, but each step ends
with xm.optimizer_step(optimizer, barrier=True), which steps and cuts the graph, instead of
optimizer.step() and a torch_xla.sync() after the meters' updates."""

TRAINER = "trainer.py"


def apply(r):
    r.gold.move_to_xla(r)
    r.gold.meters_on_device(r, sync=False)
    r.replace(TRAINER, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
