"""Another correct migration: the gold, with xm.optimizer_step(optimizer, barrier=True) (the step
and the graph cut in one call) in place of optimizer.step() and the mark_step after the
scheduler's step (the scheduler only sets the next step's learning rate, a host number)."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.RUN, "scheduler.step()")])
    r.replace(gold.RUN, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
