"""Gold migration of microsoft/Swin-Transformer (main.py, utils.py) to PyTorch/XLA, one chip.

main.py pinned its process to a GPU (torch.cuda.set_device), joined an NCCL process group from the
launcher's environment, moved the model and every batch with .cuda(non_blocking=True), wrapped the
model in DistributedDataParallel on that GPU, and synchronised the GPU and read loss.item() every
step. The gold joins torch_xla's 'xla' process group instead (the same env:// rendezvous; ranks,
the DistributedSamplers and validation's all_reduce keep working), moves the model and the batches
to torch_xla's device, wraps it in DistributedDataParallel without device_ids (an XLA module), and
ends every step with one torch_xla.sync() (after the meters' updates, where the GPU was
synchronised just before them); the loss meter sums device tensors (its log line every PRINT_FREQ
steps reads them then). Autocast names the XLA device and
bfloat16 (disabled here: --disable_amp). The CUDA GradScaler, pointless in fp32, read its found-inf
flags and its scale back to the host every step (GradScaler.step and state_dict): the loss scaler
is built disabled and the logged scale falls back to 1.0. Checkpoints are written with xm.save
(CPU copies).
"""

MAIN = "main.py"
UTILS = "utils.py"


def process_group(r, backend="xla"):
    r.insert_after(MAIN, "import torch", [
        "import torch_xla",
        "import torch_xla.core.xla_model as xm",
        "import torch_xla.distributed.xla_backend  # registers the 'xla' process-group backend",
    ])
    r.delete(MAIN, "torch.cuda.set_device(config.LOCAL_RANK)")
    r.replace(MAIN, "torch.distributed.init_process_group(backend='nccl', init_method='env://', "
                    "world_size=world_size, rank=rank)",
              f"torch.distributed.init_process_group(backend='{backend}', init_method='env://', "
              "world_size=world_size, rank=rank)")


def move_to_xla(r, device="torch_xla.device()"):
    r.replace(MAIN, "model.cuda()", f"model.to({device})")
    r.replace(MAIN, "samples = samples.cuda(non_blocking=True)", f"samples = samples.to({device})")
    r.replace(MAIN, "targets = targets.cuda(non_blocking=True)", f"targets = targets.to({device})")
    # validate and throughput repeat this line
    r.replace_each(MAIN, "images = images.cuda(non_blocking=True)", f"images = images.to({device})", 2)
    r.replace(MAIN, "target = target.cuda(non_blocking=True)", f"target = target.to({device})")


def ddp(r):
    r.replace(MAIN, ("model = torch.nn.parallel.DistributedDataParallel(model, "
                     "device_ids=[config.LOCAL_RANK], broadcast_buffers=False)"),
              "model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)")


def autocast_xla(r):
    r.replace_each(MAIN, "with torch.cuda.amp.autocast(enabled=config.AMP_ENABLE):",
                   'with torch.autocast("xla", dtype=torch.bfloat16, enabled=config.AMP_ENABLE):', 2)


def sync_each_step(r):
    """One graph per step, the meters' updates included (after them: otherwise they would join the
    next step's graph, which would then differ after every log line that reads them)."""
    r.replace_each(MAIN, "torch.cuda.synchronize()", [], 3, which=[1])
    r.insert_after(MAIN, "scaler_meter.update(loss_scale_value)", ["torch_xla.sync()"])


def loss_meter_on_device(r):
    r.replace(MAIN, "loss_meter.update(loss.item(), targets.size(0))",
              "loss_meter.update(loss.detach(), targets.size(0))")


def no_loss_scaling(r):
    r.replace(UTILS, "self._scaler = torch.cuda.amp.GradScaler()",
              'self._scaler = torch.amp.GradScaler("xla", enabled=False)  # fp32: nothing to scale')
    r.replace(MAIN, 'loss_scale_value = loss_scaler.state_dict()["scale"]',
              'loss_scale_value = loss_scaler.state_dict().get("scale", 1.0)  # no scale when disabled')


def checkpoints(r):
    r.insert_after(UTILS, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(UTILS, "torch.save(save_state, save_path)", "xm.save(save_state, save_path)")


def apply(r):
    process_group(r)
    move_to_xla(r)
    ddp(r)
    autocast_xla(r)
    sync_each_step(r)
    loss_meter_on_device(r)
    no_loss_scaling(r)
    checkpoints(r)
