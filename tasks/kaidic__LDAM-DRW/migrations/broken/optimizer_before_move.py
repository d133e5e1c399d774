"""The gold, but the model moves to the XLA device after the optimizer is built (SGD over
model.parameters() first, then `model.to(args.device)`): moving to XLA replaces each parameter
with a new tensor, so the optimizer steps the stale host copies, which never get a gradient, and
the model on the device never changes (exit 0)."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.TRAIN, "model = model.cuda(args.gpu)")])
    r.replace(gold.TRAIN, "model = model.cuda(args.gpu)", "pass  # moved after the optimizer")
    r.insert_before(gold.TRAIN, "# optionally resume from a checkpoint", ["model = model.to(args.device)"])
