"""Every edit of the gold, but both device lines keep the CUDA test and only swap the name
(`"xla" if torch.cuda.is_available() else "cpu"`): with no GPU the actor, the critic and the
batches stay on the CPU (exit 0)."""


def apply(r):
    r.gold.devices(r, device='torch.device("xla" if torch.cuda.is_available() else "cpu")')
    r.gold.seed_and_sync(r)
