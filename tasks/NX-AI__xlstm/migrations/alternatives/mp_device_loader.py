"""Another correct migration: the gold's, but the training batches reach the device through
torch_xla's MpDeviceLoader (moved by its background thread) instead of `.to(device)` in the loop."""

LOOP_START = "monitoring = tqdm(train_loader, total=0, initial=0)"


def apply(r):
    main = r.gold.MAIN
    r.apply_gold()
    r.insert_after(main, "import torch_xla", ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(main, LOOP_START,
              "monitoring = tqdm(pl.MpDeviceLoader(train_loader, torch_xla.device()), total=0, initial=0)")
    r.delete(main, "inputs = inputs.to(device=cfg.training.device)")
    r.delete(main, "labels = labels.to(device=cfg.training.device)")
