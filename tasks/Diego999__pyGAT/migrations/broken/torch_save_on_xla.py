"""The gold migration, but the per-epoch checkpoint stays torch.save(model.state_dict()) of the XLA
parameters: it works (each tensor is pickled through the CPU and torch.load rebuilds it on XLA),
but every parameter is a separate device-to-host transfer at every epoch (exit 0)."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.TRAIN, gold.SAVE)])
