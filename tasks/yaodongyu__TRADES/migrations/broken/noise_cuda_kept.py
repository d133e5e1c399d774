"""The gold's edits of train_trades_cifar10.py and the eval batch norm, but trades.py's PGD start
noise keeps its `torch.randn(...).cuda()`: the migration of the training script missed the loss
module, which has no device switch. On a host without CUDA the first step fails."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[
        (gold.TRADES, "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()"),
        (gold.TRADES, "delta = 0.001 * torch.randn(x_natural.shape).cuda().detach()"),
    ])
