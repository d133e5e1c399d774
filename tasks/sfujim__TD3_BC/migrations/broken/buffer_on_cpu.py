"""Moves the networks (TD3_BC.py's device) to XLA but misses the replay buffer's own device line in
utils.py: the sampled batches stay CPU tensors and the first forward mixes devices (crash)."""


def apply(r):
    r.apply_gold(without=[("utils.py", "import torch"), ("utils.py", f"self.device = {r.gold.CUDA_DEVICE}")])
