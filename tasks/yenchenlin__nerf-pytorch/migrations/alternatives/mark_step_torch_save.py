"""Another correct migration: xm.mark_step() instead of torch_xla.sync() after each step, and the
project's own torch.save of the checkpoint kept (torch serialises XLA tensors through the CPU, so
the file loads on a machine without the device)."""


def apply(r):
    g = r.gold
    r.apply_gold(without=[(g.TRAIN, g.STEP), (g.TRAIN, g.SAVE)])
    r.replace(g.TRAIN, g.STEP, ["with torch.device('cpu'):  # Adam's step counters on the host",
                                "    optimizer.step()",
                                "xm.mark_step()"])
