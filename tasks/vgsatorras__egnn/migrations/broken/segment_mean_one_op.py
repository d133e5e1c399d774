"""Broken: the gold migration, plus a "simplification" of unsorted_segment_mean (two scatter_add_
calls and a division) into one scatter_reduce_(reduce="mean"). On XLA that op falls back to the
CPU (aten::scatter_reduce.two) in every layer; and its include_self defaults to True, so the zero
the result starts from counts as one more element of every mean: each node's coordinate update is
divided by its degree + 1. Exit 0."""


def apply(r):
    r.apply_gold()
    r.replace("models/gcl.py", "count = data.new_full(result_shape, 0)",
              'return result.scatter_reduce_(0, segment_ids, data, reduce="mean")')
