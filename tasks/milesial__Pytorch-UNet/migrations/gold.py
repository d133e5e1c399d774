"""Gold migration of milesial/Pytorch-UNet (train.py in fp32) to PyTorch/XLA.

- the device is the XLA device (the project picks cuda, else the CPU); the model, the batches
  (still moved with the project's own `.to(device=..., memory_format=torch.channels_last)`) and
  the validation rounds follow it. `torch.autocast(device.type, enabled=amp)` and the CUDA
  GradScaler stay as they are: without --amp both are off (a disabled scaler passes the loss, the
  unscale and the step straight through), so the clipping sees the true gradients;
- one graph per training step: torch_xla.sync() after the optimizer update;
- no per-step host reads: the epoch loss is summed on the device, the progress bar no longer shows
  the batch loss, and the training loss is logged with each validation round (which reads the
  device anyway: the Dice score for the scheduler, the weight histograms) instead of every step.

Each edit is anchored on one line of the verified tree that occurs exactly once (tasks/recipe.py).
Broken recipes in broken/ build on it with `r.gold` or `r.apply_gold(without=[(file, anchor)])`.
"""

TRAIN = "train.py"
DEVICE = "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')"
UPDATE = "grad_scaler.update()"
EPOCH_LOSS = "epoch_loss += loss.item()"
LOG_LOSS = "'train loss': loss.item(),"
POSTFIX = "pbar.set_postfix(**{'loss (batch)': loss.item()})"
VAL_LOG = "'validation Dice': val_score,"


def to_xla(r):
    r.insert_after(TRAIN, "import torch", ["import torch_xla"])
    r.replace(TRAIN, DEVICE, "device = torch_xla.device()")
    r.insert_after(TRAIN, UPDATE, ["torch_xla.sync()  # cut the step's graph here"])


def no_step_reads(r):
    r.replace(TRAIN, EPOCH_LOSS, "epoch_loss += loss.detach()  # summed on the device")
    r.delete(TRAIN, LOG_LOSS)
    r.delete(TRAIN, POSTFIX)
    r.insert_after(TRAIN, VAL_LOG, ["'train loss': loss.item(),  # read with the validation round"])


def apply(r):
    to_xla(r)
    no_step_reads(r)
