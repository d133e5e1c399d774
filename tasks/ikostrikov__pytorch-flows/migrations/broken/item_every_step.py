"""The gold, but the training loop keeps its per-step reads: `train_loss += loss.item()` for the
progress bar and `loss.item()` for the TensorBoard scalar, two host synchronisations every
optimizer step (exit 0, numerics unchanged)."""


def apply(r):
    r.gold.select_device(r)
    r.gold.step_sync(r)
