"""Every edit of the gold, but the device is chosen CUDA-style
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`) and the process group is gloo,
"the CPU fallback of NCCL": with no GPU the model and every batch stay on the CPU (exit 0;
torch_xla.sync() has nothing to run)."""


def apply(r):
    r.gold.process_group(r, backend="gloo")
    r.gold.move_to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    r.gold.ddp(r)
    r.gold.autocast_xla(r)
    r.gold.sync_each_step(r)
    r.gold.loss_meter_on_device(r)
    r.gold.no_loss_scaling(r)
    r.gold.checkpoints(r)
