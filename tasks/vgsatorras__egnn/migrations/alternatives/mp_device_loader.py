"""Another correct migration: the gold's, with the batches brought to the device by torch_xla's
`MpDeviceLoader` (which also ends each step's graph) in place of the gold's `xm.mark_step()`."""


def apply(r):
    script = r.gold.SCRIPT
    r.apply_gold(without=[(script, "res['counter'] += batch_size")])  # no xm.mark_step() after it
    r.insert_after(script, "import torch_xla.core.xla_model as xm",
                   ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(script, "for batch_idx, data in enumerate(loader):",
              "for batch_idx, data in enumerate(pl.MpDeviceLoader(loader, device)):")
