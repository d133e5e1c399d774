"""The gold's process group, device, DDP, per-step sync, loss scaler and checkpoints, but the loss
meter still reads loss.item() every step, as the CUDA original does: a host read every optimizer
step (exit 0, numerics fine)."""


def apply(r):
    r.apply_gold(without=[(r.gold.MAIN, "loss_meter.update(loss.item(), targets.size(0))")])
