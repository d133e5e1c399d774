"""Every edit of the gold, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`): with no GPU the student, the
teacher and the batches stay on the CPU (exit 0; torch_xla.sync() has nothing to run)."""


def apply(r):
    r.gold.move_to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    r.gold.sync_each_step(r)
    r.gold.loss_meter_on_device(r)
