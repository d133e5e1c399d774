"""Another correct migration: the gold's device, moves, meters and checkpoints, but each step ends
with xm.optimizer_step(optimizer, barrier=True), which steps and cuts the graph, instead of
optimizer.step() and a torch_xla.sync() after the meters' updates."""

TRAINER = "trainer.py"


def apply(r):
    r.gold.move_to_xla(r)
    r.replace_each(TRAINER, "losses.update(loss.item(), input.size(0))",
                   "losses.update(loss.detach(), input.size(0))", 2, which=[1])
    r.replace_each(TRAINER, "top1.update(prec1.item(), input.size(0))",
                   "top1.update(prec1.detach(), input.size(0))", 2, which=[1])
    r.replace(TRAINER, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
