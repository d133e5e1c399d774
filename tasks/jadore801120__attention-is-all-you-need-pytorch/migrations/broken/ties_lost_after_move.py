"""The gold without the re-tying: `Transformer(...).to(device)` onto XLA gives the output projection and
the source embedding their own copies of the target embedding's weight, which then train apart (two
more parameter tensors than the reference, -proj_share_weight and -embs_share_weight silently undone)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r, retie=False)
    gold.fixed_length(r)
    gold.masks_on_device(r)
    gold.counts_on_device(r)
