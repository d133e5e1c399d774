"""Broken: the gold, except that the loss still divides by `num_eval if num_eval > 0 else 1`: the
Python `if` on a device tensor reads it on the host at every step (exit 0)."""


def apply(r):
    r.apply_gold(without=[("main_model.py",
                           "loss = (residual ** 2).sum() / (num_eval if num_eval > 0 else 1)")])
