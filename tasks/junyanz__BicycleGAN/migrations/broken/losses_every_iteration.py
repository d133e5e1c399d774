"""Broken: the gold, plus epoch averages of the losses: model.get_current_losses() (a float() of
each of the seven losses) after every iteration, printed at the end of the epoch: a host read in
every iteration instead of every --print_freq images (exit 0)."""


EPOCH_START = ("epoch_iter = 0                  # the number of training iterations in current epoch, "
               "reset to 0 every epoch")
EPOCH_END = ("model.update_learning_rate()                     "
             "# update learning rates at the end of every epoch.")


def apply(r):
    r.apply_gold()
    r.insert_after("train.py", EPOCH_START, ["epoch_losses = {}"])
    r.insert_after("train.py", "xm.mark_step()  # one graph per iteration: G, E, D and D2 updates", [
        "for name, value in model.get_current_losses().items():",
        "    epoch_losses[name] = epoch_losses.get(name, 0.0) + value / (dataset_size // opt.batch_size)",
    ])
    r.insert_before("train.py", EPOCH_END, ["print('epoch %d mean losses: %s' % (epoch, epoch_losses))"])
