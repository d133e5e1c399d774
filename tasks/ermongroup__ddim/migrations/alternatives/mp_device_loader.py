"""Another correct migration: the gold's, with torch.device("xla") for the device and the batches
brought to it by torch_xla's MpDeviceLoader (which also ends each step's graph) in place of the
gold's torch_xla.sync()."""


def apply(r):
    r.gold.device_to_xla(r, device='torch.device("xla")')
    r.gold.loop_to_xla(r, sync=False)
    r.insert_after(r.gold.RUNNER, "import torch_xla.core.xla_model as xm",
                   ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(r.gold.RUNNER, "for i, (x, y) in enumerate(train_loader):",
              "for i, (x, y) in enumerate(pl.MpDeviceLoader(train_loader, self.device)):")
