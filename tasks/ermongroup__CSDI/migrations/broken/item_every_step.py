"""Broken: the gold, except that the epoch's running loss is still read with loss.item() after
every step (tqdm's postfix shows it): a host read per training step (exit 0)."""


def apply(r):
    r.apply_gold(without=[("utils.py", "avg_loss += loss.item()"),
                          ("utils.py", '"avg_epoch_loss": avg_loss / batch_no,')])
