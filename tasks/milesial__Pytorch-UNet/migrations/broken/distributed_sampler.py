"""The gold with the training loader rebuilt on the PyTorch/XLA multi-core template: a
DistributedSampler over xr.world_size() replicas (one here) with shuffle=True, and the loader's
own shuffle dropped. Every image is still seen once, but the order is the sampler's own
permutation (seeded with its seed 0 + epoch) instead of the loader's draw from torch's generator,
so the first batch, and every batch after it, differ from the project's.
"""

LOADER = "train_loader = DataLoader(train_set, shuffle=True, **loader_args)"


def apply(r):
    r.gold.apply(r)
    r.insert_after(r.gold.TRAIN, "import torch_xla", [
        "import torch_xla.runtime as xr",
        "from torch.utils.data.distributed import DistributedSampler",
    ])
    r.replace(r.gold.TRAIN, LOADER, [
        "train_sampler = DistributedSampler(train_set, num_replicas=xr.world_size(),",
        "                                   rank=xr.global_ordinal(), shuffle=True)",
        "train_loader = DataLoader(train_set, sampler=train_sampler, **loader_args)",
    ])
