"""Another correct migration: the gold's device, moves, meters and checkpoints, but the training
batches come through torch_xla's MpDeviceLoader (the loop's .to(device) then has nothing to move),
which cuts the graph before each next batch itself, instead of an explicit torch_xla.sync()."""

TRAINER = "trainer.py"


def apply(r):
    r.gold.move_to_xla(r)
    r.gold.meters_on_device(r, sync=False)
    r.insert_after(TRAINER, "import torch_xla", ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(TRAINER, "train(train_loader, model, criterion, optimizer, epoch)",
              "train(pl.MpDeviceLoader(train_loader, device), model, criterion, optimizer, epoch)")
