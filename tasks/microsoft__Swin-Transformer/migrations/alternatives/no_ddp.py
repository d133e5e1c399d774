"""Another correct migration: the gold's 'xla' process group (ranks, samplers and validation's
all_reduce), device, per-step sync, loss meter, loss scaler and checkpoints, but no
DistributedDataParallel: on one chip it has nothing to average, so the model is trained unwrapped
(model_without_ddp is then the model itself)."""

MAIN = "main.py"


def apply(r):
    r.gold.process_group(r)
    r.gold.move_to_xla(r)
    r.replace(MAIN, ("model = torch.nn.parallel.DistributedDataParallel(model, "
                     "device_ids=[config.LOCAL_RANK], broadcast_buffers=False)"),
              "# one chip: no DistributedDataParallel, the model is trained as it is")
    r.gold.autocast_xla(r)
    r.gold.sync_each_step(r)
    r.gold.loss_meter_on_device(r)
    r.gold.no_loss_scaling(r)
    r.gold.checkpoints(r)
