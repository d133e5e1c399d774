"""Another correct migration: torch_xla.device(), torch_xla.manual_seed and torch_xla.sync()
instead of the gold's xm calls, and the training batches moved by torch_xla's MpDeviceLoader (a
background thread copies each batch to the device ahead of the step; the loop's own .to(device)
then does nothing)."""

PL = "import torch_xla.distributed.parallel_loader as pl"


def apply(r):
    gold = r.gold
    gold.to_xla(r, device="torch_xla.device()", sync="torch_xla.sync()",
                seed="torch_xla.manual_seed(args.seed)", imports=("import torch_xla", PL))
    gold.no_step_reads(r)
    r.replace(gold.RUN, 'bar = tqdm(train_dataloader, total=len(train_dataloader), desc="Training")',
              'bar = tqdm(pl.MpDeviceLoader(train_dataloader, args.device), total=len(train_dataloader), '
              'desc="Training")')
