"""Broken: pads every structure's group to the batch size like the gold, but never gives the
padding rows weight zero: the copies of each group's first query enter the loss with that
query's subsampling weight, so the loss (and every gradient) is another one (exit 0, static
shapes)."""


def apply(r):
    gold = r.gold
    gold.model_to_xla(r)
    gold.train_batches_to_device(r, mask=False)
    gold.sync_each_step(r)
    gold.no_step_reads(r)
    gold.test_on_device(r)
