"""The gold, with the step written the torch_xla way as `xm.optimizer_step(optimizer._optimizer)`: the
wrapped Adam steps, but ScheduledOptim's warm-up never sets a learning rate, so every step uses Adam's
default 0.001 instead of the schedule."""


def apply(r):
    r.apply_gold()
    r.replace(r.gold.TRAIN, "optimizer.step_and_update_lr()", "xm.optimizer_step(optimizer._optimizer)")
