"""Broken: the sparse matrices become dense on the host and the products mm, as in the gold, but
nothing is padded: every batch has its own node count (the sum of its 32 graphs' sizes), so XLA
compiles a new graph at every step (exit 0, numerics fine)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r)
    gold.dense_graph_ops(r, pad=False)
    gold.no_step_reads(r)
