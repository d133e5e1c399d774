"""Broken: every edit of the gold, but the device is chosen CUDA-style (cuda if available, else
the CPU): with no GPU both stages train on the CPU (exit 0)."""


def apply(r):
    gold = r.gold
    gold.weight_norm_on_xla(r)
    gold.to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    gold.labels_on_device(r)
