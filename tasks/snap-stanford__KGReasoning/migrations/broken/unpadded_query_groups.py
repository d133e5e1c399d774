"""Broken: the gold, but each structure's group keeps the batch's own count of queries (no
padding): a shuffled batch of 64 holds a different number of 1p and 2p queries at every step, so
the path steps' shapes change and XLA compiles a graph for every new pair of counts (exit 0,
numerics fine)."""


def apply(r):
    gold = r.gold
    gold.model_to_xla(r)
    gold.train_batches_to_device(r, pad=False)
    gold.sync_each_step(r)
    gold.no_step_reads(r)
    gold.test_on_device(r)
