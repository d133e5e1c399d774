"""The gold migration, but the training meters still read loss.item() and prec1.item() every
step, as the CUDA original does: two host reads per step (exit 0, numerics fine)."""


def apply(r):
    gold = r.gold
    gold.move_to_xla(r)
    r.replace_each(gold.TRAINER, "top1.update(prec1.item(), input.size(0))",
                   ["top1.update(prec1.item(), input.size(0))", "torch_xla.sync()"], 2, which=[1])
