"""The gold's device, moves and per-step sync, but the training loop's three loss meters still read
loss.item(), Lx.item() and Lu.item() every step, as the CUDA original does (and the progress bar
formats them every step): three host reads every optimizer step (exit 0, numerics fine)."""


def apply(r):
    r.gold.xla_device(r)
    r.gold.permutation_to_device(r)
    r.gold.sync_per_step(r)
