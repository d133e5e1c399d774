"""Another correct migration: the gold, with xm.optimizer_step(optimizer, barrier=True) (the step
and the graph cut in one call) in place of optimizer.step() and the mark_step after the scheduler
step; the scheduler then sets the next step's learning rate on the host, as before."""


def apply(r):
    script = r.gold.SCRIPT
    r.apply_gold(without=[(script, "lr_scheduler.step()")])  # no xm.mark_step() after it
    r.replace(script, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
