"""Another correct migration: the gold, with xm.optimizer_step(optimizer, barrier=True) (the step
and the graph cut in one call) in place of optimizer.step() followed by xm.mark_step()."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.MAIN, "optimizer.step()")])
    r.replace(gold.MAIN, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
