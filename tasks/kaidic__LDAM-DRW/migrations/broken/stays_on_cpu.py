"""Every edit of the gold, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`): with no GPU, model, criterion
and batches stay on the CPU (exit 0; torch_xla.sync() has nothing to run)."""


def apply(r):
    gold = r.gold
    gold.xla_device(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    gold.ldam_on_device(r)
    gold.meters_on_device(r)
