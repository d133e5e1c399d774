"""Broken: the gold, but lr_scheduler (which sets every group's lr, momentum, Nesterov and
weight decay before each step) is called only before the first step of each stage, to keep the
learning rate from changing between steps: the lr stays at its first-step value instead of
decaying by (1 + 10 t / T)^-0.75 (exit 0)."""

SCHEDULE = "lr_scheduler(optimizer, iter_num=iter_num, max_iter=max_iter)"


def apply(r):
    gold = r.gold
    gold.weight_norm_on_xla(r)
    gold.to_xla(r)
    gold.labels_on_device(r)
    r.replace_each(gold.UDA, SCHEDULE, ["if iter_num == 1:", "    " + SCHEDULE], count=2)
