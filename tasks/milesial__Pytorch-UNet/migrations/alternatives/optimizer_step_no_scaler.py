"""Another correct migration: the (disabled) gradient scaler removed altogether instead of left in
place: a plain backward, the clipping on the raw gradients, xm.optimizer_step(optimizer) for the
update and xm.mark_step() to cut the step's graph, the device from xm.xla_device(). The per-step
host reads go as in the gold.
"""

SCALER = "grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)"
BACKWARD = "grad_scaler.scale(loss).backward()"
UNSCALE = "grad_scaler.unscale_(optimizer)"
STEP = "grad_scaler.step(optimizer)"


def apply(r):
    t = r.gold.TRAIN
    r.insert_after(t, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.replace(t, r.gold.DEVICE, "device = xm.xla_device()")
    r.delete(t, SCALER)
    r.replace(t, BACKWARD, "loss.backward()")
    r.delete(t, UNSCALE)
    r.replace(t, STEP, "xm.optimizer_step(optimizer)")
    r.replace(t, r.gold.UPDATE, "xm.mark_step()")
    r.gold.no_step_reads(r)
