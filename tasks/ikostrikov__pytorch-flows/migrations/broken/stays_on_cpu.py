"""Every edit of the gold, but the device is still chosen CUDA-style
(`"cuda:0" if torch.cuda.is_available() else "cpu"`): with no GPU the flow trains on the CPU
(exit 0)."""


def apply(r):
    r.gold.select_device(r, device='torch.device("cuda:0" if torch.cuda.is_available() else "cpu")')
    r.gold.step_sync(r)
    r.gold.losses_on_device(r)
