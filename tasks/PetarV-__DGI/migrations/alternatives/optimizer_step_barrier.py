"""The gold migration with xm.optimizer_step(optimiser, barrier=True) (the step and the graph
cut in one call) in place of optimiser.step() followed by xm.mark_step()."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.EXEC, "optimiser.step()")])
    r.replace(gold.EXEC, "optimiser.step()", "xm.optimizer_step(optimiser, barrier=True)")
