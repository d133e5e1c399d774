"""Another correct migration: the gold's device, loss reads and checkpoints, but the batches come
through torch_xla's MpDeviceLoader, which moves both views to the device (the explicit moves go)
and cuts the graph after each step itself, instead of .to(device) and a torch_xla.sync()."""

MAIN = "main.py"


def apply(r):
    r.gold.move_to_xla(r)
    r.gold.losses_read_per_epoch(r)
    r.insert_after(MAIN, "import torch_xla", ["import torch_xla.distributed.parallel_loader as pl"])
    r.delete(MAIN, "x_i = x_i.to(args.device)")
    r.delete(MAIN, "x_j = x_j.to(args.device)")
    r.replace(MAIN, "loss_epoch = train(args, train_loader, model, criterion, optimizer, writer)",
              "loss_epoch = train(args, pl.MpDeviceLoader(train_loader, args.device), model, criterion, "
              "optimizer, writer)")
