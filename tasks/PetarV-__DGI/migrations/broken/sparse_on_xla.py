"""Moves the sparse COO adjacency to the XLA device as the CUDA code did and keeps torch.spmm:
sparse tensors do not exist on XLA."""


def apply(r):
    gold = r.gold
    gold.move_to_xla(r, dense_adj=False)
    gold.one_host_read(r)
    gold.best_on_device(r)
