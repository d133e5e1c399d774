"""Another correct migration: the device named `torch.device("xla")`, and the smoothed loss summed over
the non-pad positions by multiplying with the mask instead of masked_fill."""


def apply(r):
    gold = r.gold
    gold.to_xla(r, device="torch.device('xla')")
    gold.fixed_length(r)
    gold.masks_on_device(r, loss_line="loss = (loss * non_pad_mask).sum()  # average later")
    gold.counts_on_device(r)
