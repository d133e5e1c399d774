"""The gold's device, moves and per-step sync, but the distillation loop's loss meter still reads
loss.item() every step, as the CUDA original does: a host read every optimizer step (exit 0,
numerics fine)."""


def apply(r):
    r.gold.move_to_xla(r)
    r.gold.sync_each_step(r)
