"""Every edit of the gold migration, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`): with no GPU the whole run
stays on the CPU (exit 0)."""


def apply(r):
    gold = r.gold
    gold.move_to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    gold.one_host_read(r)
    gold.best_on_device(r)
