"""Another correct migration: the device as `torch.device("xla")`, the PGD start noise drawn on the
host as upstream and moved with `.to(x_natural.device)` (the same draw as the CPU reference), and
the update through xm.optimizer_step(optimizer, barrier=True), which cuts the step's graph itself.
Batch norm in eval mode is written out for the PGD loop as in the gold."""


def apply(r):
    gold = r.gold
    gold.xla_device(r, device='torch.device("xla")')
    gold.eval_bn_differentiable(r)
    r.replace(gold.TRADES,
              "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()",
              "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).to(x_natural.device)")
    r.replace(gold.TRADES, "delta = 0.001 * torch.randn(x_natural.shape).cuda().detach()",
              "delta = 0.001 * torch.randn(x_natural.shape).to(x_natural.device)")
    r.replace(gold.TRAIN, "optimizer.step()", "xm.optimizer_step(optimizer, barrier=True)")
