"""Every edit of the gold migration, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`): with no GPU the model and the
batches stay on the CPU (exit 0; torch_xla.sync() has nothing to run)."""


def apply(r):
    gold = r.gold
    gold.move_to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    gold.meters_on_device(r)
