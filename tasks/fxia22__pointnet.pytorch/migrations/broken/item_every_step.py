"""The gold, but the per-step training print is kept as the CUDA original wrote it: loss.item() and
correct.item() every optimizer step, two host reads a step (exit 0, numerics fine)."""


def apply(r):
    r.apply_gold(without=[(r.gold.TRAIN, r.gold.TRAIN_PRINT)])
