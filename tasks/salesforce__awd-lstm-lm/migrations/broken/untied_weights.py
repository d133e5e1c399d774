"""Every edit of the gold but the re-tie after the move: `model.to(device)` on XLA gives the
embedding and the decoder parameter objects of their own, so from then on they train as two
separate matrices (the optimizer holds one parameter more than the reference's)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r, retie=False)
    gold.cut_graphs(r)
