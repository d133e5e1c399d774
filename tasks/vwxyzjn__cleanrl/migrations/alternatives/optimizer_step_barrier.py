"""Another correct migration: the gold's host rollout, device batch and clip fraction, but each
minibatch ends with xm.optimizer_step(optimizer, barrier=True), which steps (after the project's
gradient clipping) and cuts the graph, instead of optimizer.step() and xm.mark_step()."""


def apply(r):
    ppo = r.gold.PPO
    r.apply_gold(without=[(ppo, "optimizer.step()")])  # no xm.mark_step() after it
    r.replace(ppo, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
