"""Every edit of the gold but the device line: the script's own CUDA-style choice stays
(`cuda` if available, else `cpu`), so with no GPU the model and batches stay on the CPU (exit 0;
torch_xla.sync() has nothing to run)."""


def apply(r):
    r.apply_gold(without=[(r.gold.TRAIN, 'device = torch.device("cuda" if use_cuda else "cpu")')])
