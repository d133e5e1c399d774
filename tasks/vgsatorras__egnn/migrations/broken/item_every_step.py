"""Broken: the gold migration, but the running loss still reads loss.item() every batch."""


def apply(r):
    r.apply_gold(without=[(r.gold.SCRIPT, "res['loss'] += loss.item()*batch_size")])
