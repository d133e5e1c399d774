"""Broken: pads every batch to B * max_nodes nodes like the gold, but keeps the BatchNorm1d layers
as they are: the padding rows (a third or more of the rows) enter every layer's batch mean and
variance and the running statistics, so the model computes another function (exit 0, static
shapes)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r)
    gold.dense_graph_ops(r)
    gold.no_step_reads(r)
