"""Another correct migration: the gold's device, moves, loss meter and checkpoints, but the training
batches come through torch_xla's MpDeviceLoader, which puts them on the device (the loop's
.to(opt.device) then has nothing to move) and cuts the graph after each step itself, instead of
an explicit torch_xla.sync()."""

MAIN = "train_student.py"


def apply(r):
    r.gold.move_to_xla(r)
    r.gold.loss_meter_on_device(r)
    r.insert_after(MAIN, "import torch_xla", ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(MAIN, "train_acc, train_loss = train(epoch, train_loader, module_list, criterion_list, "
                    "optimizer, opt)",
              "train_acc, train_loss = train(epoch, pl.MpDeviceLoader(train_loader, opt.device), module_list,"
              " criterion_list, optimizer, opt)")
