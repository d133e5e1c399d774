"""Another correct migration: the gold's, with `xm.optimizer_step(optimizer, barrier=True)` (the
step and the graph's execution in one call) in place of `optimizer.step()` and `xm.mark_step()`."""


def apply(r):
    main = r.gold.MAIN
    r.apply_gold(without=[(main, "optimizer.step()")])  # no xm.mark_step() after it
    r.replace(main, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
