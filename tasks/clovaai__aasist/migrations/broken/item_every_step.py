"""The gold, but train_epoch keeps `running_loss += batch_loss.item() * batch_size`: the loss is
read to the host after every step (a device-to-host transfer that also waits for the step)."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.MAIN, "running_loss = 0"), (gold.MAIN, gold.STEP_READ),
                          (gold.MAIN, gold.EPOCH_MEAN)])
