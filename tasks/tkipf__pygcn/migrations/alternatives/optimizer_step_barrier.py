"""Another correct migration: the gold, with xm.optimizer_step(optimizer, barrier=True) (the step
and a graph cut in one call) in place of optimizer.step(); the gold's mark_step after the
validation pass then cuts the validation graph alone, so each epoch runs two fixed graphs."""


def apply(r):
    r.apply_gold()
    r.replace(r.gold.TRAIN, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
