"""Another correct migration: the gold's, with `xm.optimizer_step(optimizer, barrier=True)` (the
step and the graph's execution in one call) in place of `optimizer.step()` and the sync after the
training metric's update (that update joins the next step's graph)."""


def apply(r):
    main = r.gold.MAIN
    r.apply_gold(without=[(main, "train_metrics.update(outputs, labels)")])  # no torch_xla.sync()
    r.insert_after(main, "import torch_xla", ["import torch_xla.core.xla_model as xm"])
    r.replace(main, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
