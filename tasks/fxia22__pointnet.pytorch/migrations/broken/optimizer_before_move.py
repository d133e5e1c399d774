"""Every edit of the gold, but the model moves to the XLA device where the original called
classifier.cuda(), after Adam was built on its parameters: Module.to gives XLA tensors new
Parameter objects, so the optimizer steps the stale CPU parameters, which never get a gradient,
and the trained model never changes (exit 0)."""


def apply(r):
    r.gold.move_to_xla(r, before_optimizer=False)
    r.gold.identities_on_device(r)
    r.gold.sync_each_step(r)
    r.gold.reads_per_epoch(r)
