"""Gold migration of YU1ut/MixMatch-pytorch (train.py) to PyTorch/XLA.

train.py moved both models with an unconditional `.cuda()` and each batch with `.cuda()` under
`use_cuda`: the device becomes torch_xla's, both models move there in create_model (before Adam and
the WeightEMA are built, so both hold the device tensors: the EMA's lists are the models'
state_dict tensors, which alias the parameters and buffers on XLA as on CUDA), and the batches
move where the original moved them. The label guessing, the mixup and the interleaving stay as
written: the mixup coefficient is still drawn by numpy on the host (a Python float, which
torch_xla passes as data, not as a constant, so the graph does not change with it) and the
permutation by torch's CPU generator, moved to the batch's device before it indexes it, so the
run draws exactly what the original draws. One torch_xla.sync() after the EMA step cuts the
graph: the forward passes, backward, Adam and the EMA update are one graph per step.

The loss meters of the training loop sum device tensors instead of reading three `.item()`s every
step, and the progress-bar suffix (whose `{loss:.4f}` would read them) is formatted once per epoch,
after the last step, from the same fields. Validation keeps its reads. Checkpoints are written with
xm.save (CPU copies, loadable without torch_xla).
"""

TRAIN = "train.py"

SUFFIX = ("'({batch}/{size}) Data: {data:.3f}s | Batch: {bt:.3f}s | Total: {total:} | ETA: {eta:} | "
          "Loss: {loss:.4f} | Loss_x: {loss_x:.4f} | Loss_u: {loss_u:.4f} | W: {w:.4f}'")


def xla_device(r, device="torch_xla.device()"):
    """The device is torch_xla's; models and batches move there; checkpoints as CPU copies."""
    r.insert_after(TRAIN, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.replace(TRAIN, "use_cuda = torch.cuda.is_available()",
              [f"device = {device}", "use_cuda = True  # train() and validate() move batches to `device`"])
    r.replace(TRAIN, "model = model.cuda()", "model = model.to(device)")
    r.replace(TRAIN, "inputs_x, targets_x = inputs_x.cuda(), targets_x.cuda(non_blocking=True)",
              "inputs_x, targets_x = inputs_x.to(device), targets_x.to(device)")
    r.replace(TRAIN, "inputs_u = inputs_u.cuda()", "inputs_u = inputs_u.to(device)")
    r.replace(TRAIN, "inputs_u2 = inputs_u2.cuda()", "inputs_u2 = inputs_u2.to(device)")
    r.replace(TRAIN, "inputs, targets = inputs.cuda(), targets.cuda(non_blocking=True)",
              "inputs, targets = inputs.to(device), targets.to(device)")
    r.replace(TRAIN, "torch.save(state, filepath)", "xm.save(state, filepath)")


def permutation_to_device(r):
    """The mixup permutation: drawn by torch's CPU generator as upstream, then moved."""
    r.replace(TRAIN, "idx = torch.randperm(all_inputs.size(0))",
              "idx = torch.randperm(all_inputs.size(0)).to(all_inputs.device)")


def sync_per_step(r):
    r.insert_after(TRAIN, "ema_optimizer.step()", ["torch_xla.sync()"])


def meters_on_device(r):
    """No host read per step: the training meters sum device tensors, the bar suffix is built once
    per epoch (after the last step) from the same fields."""
    r.replace(TRAIN, "losses.update(loss.item(), inputs_x.size(0))",
              "losses.update(loss.detach(), inputs_x.size(0))")
    r.replace(TRAIN, "losses_x.update(Lx.item(), inputs_x.size(0))",
              "losses_x.update(Lx.detach(), inputs_x.size(0))")
    r.replace(TRAIN, "losses_u.update(Lu.item(), inputs_x.size(0))",
              "losses_u.update(Lu.detach(), inputs_x.size(0))")
    r.replace(TRAIN, "bar.suffix  = '({batch}/{size}) Data: {data:.3f}s | Batch: {bt:.3f}s | Total: {total:} "
                     "| ETA: {eta:} | Loss: {loss:.4f} | Loss_x: {loss_x:.4f} | Loss_u: {loss_u:.4f} | "
                     "W: {w:.4f}'.format(",
              "suffix_fields = dict(  # formatted after the last step: no host read per step")
    r.replace_each(TRAIN, "bar.finish()", [
        f"bar.suffix = {SUFFIX}.format(**suffix_fields)",
        "bar.finish()",
    ], 2, which=[1])


def apply(r):
    xla_device(r)
    permutation_to_device(r)
    sync_per_step(r)
    meters_on_device(r)
