"""Every edit of the gold, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`): with no GPU both models, the
batches, the label guessing and the EMA update stay on the CPU (exit 0; torch_xla.sync() has
nothing to run)."""


def apply(r):
    r.gold.xla_device(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    r.gold.permutation_to_device(r)
    r.gold.sync_per_step(r)
    r.gold.meters_on_device(r)
