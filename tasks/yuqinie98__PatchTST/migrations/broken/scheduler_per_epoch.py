"""The gold, and the per-batch `scheduler.step()` of the --lradj TST path removed (a host-side call in
the step loop, taken for a sync): the OneCycle schedule never advances, so every step trains at its
initial learning rate (max_lr / 25) instead of warming up to max_lr."""


def apply(r):
    r.apply_gold()
    r.delete(r.gold.EXP, "scheduler.step()")
