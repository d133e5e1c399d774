"""Broken: the gold, except that options/base_options.py still selects the CUDA device named by
--gpu_ids (torch.cuda.set_device): without a GPU the run stops while parsing its options."""


def apply(r):
    r.apply_gold(without=[(r.gold.OPTIONS, r.gold.SET_DEVICE)])
