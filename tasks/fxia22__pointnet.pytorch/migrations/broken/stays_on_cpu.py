"""Every edit of the gold, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`): with no GPU the model and every
batch stay on the CPU (exit 0; torch_xla.sync() has nothing to run)."""


def apply(r):
    r.gold.move_to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    r.gold.identities_on_device(r)
    r.gold.sync_each_step(r)
    r.gold.reads_per_epoch(r)
