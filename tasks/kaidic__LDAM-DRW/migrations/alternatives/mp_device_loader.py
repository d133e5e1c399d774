"""Another correct migration: the device as `torch.device("xla")` and the training batches fed
by torch_xla's MpDeviceLoader (it moves each batch to the device ahead of use and cuts the graph
at every batch, so the loop needs no explicit sync; the script's own .to(args.device) calls find
the batches already there). LDAMLoss and the loss meter are migrated as in the gold."""


def apply(r):
    gold = r.gold
    gold.xla_device(r, device='torch.device("xla")')
    gold.ldam_on_device(r)
    r.replace_each(gold.TRAIN, "losses.update(loss.item(), input.size(0))",
                   "losses.update(loss.detach(), input.size(0))", 2, which=[1])
    r.insert_after(gold.TRAIN, "import torch_xla", ["import torch_xla.distributed.parallel_loader as pl"])
    rest = "model, criterion, optimizer, epoch, args, log_training, tf_writer)"
    r.replace(gold.TRAIN, f"train(train_loader, {rest}",
              f"train(pl.MpDeviceLoader(train_loader, args.device), {rest}")
