"""Gold migration of akamaster/pytorch_resnet_cifar10 (trainer.py) to PyTorch/XLA.

The model goes to the XLA device; DataParallel stays, as a pass-through (it replicates over CUDA
devices only, and an XLA host has none), so the state_dict keeps its `module.` keys and the
project's released checkpoints still load with --resume. The criterion and every batch move with
.to(device) where the original called .cuda(). In the training loop the loss and precision meters
accumulate device tensors instead of reading .item() every step (the log line, printed every
--print-freq steps, reads them then), and each step ends with one torch_xla.sync(), so one graph
is compiled and reused. Validation (after training) keeps its .item() reads; checkpoints are
written with xm.save (CPU copies).
"""

TRAINER = "trainer.py"


def move_to_xla(r, device="torch_xla.device()"):
    """Model, criterion and batches on `device`; checkpoints saved as CPU copies."""
    r.insert_after(TRAINER, "import torch", ["import torch_xla",
                                             "import torch_xla.core.xla_model as xm"])
    r.replace(TRAINER, "global args, best_prec1", "global args, best_prec1, device")  # as args
    r.replace(TRAINER, "model.cuda()", [f"device = {device}", "model.to(device)"])
    r.replace(TRAINER, "criterion = nn.CrossEntropyLoss().cuda()",
              "criterion = nn.CrossEntropyLoss().to(device)")
    # train() and validate() repeat these lines verbatim
    r.replace_each(TRAINER, "target = target.cuda()", "target = target.to(device)", 2)
    r.replace_each(TRAINER, "input_var = input.cuda()", "input_var = input.to(device)", 2)
    r.replace(TRAINER, "target_var = target.cuda()", "target_var = target")
    r.replace(TRAINER, "torch.save(state, filename)", "xm.save(state, filename)")


def meters_on_device(r, sync=True):
    """train(): the meters sum device tensors; with `sync`, one sync per step after the meters'
    updates (an alternative that cuts the graph another way passes False)."""
    r.replace_each(TRAINER, "losses.update(loss.item(), input.size(0))",
                   "losses.update(loss.detach(), input.size(0))", 2, which=[1])
    r.replace_each(TRAINER, "top1.update(prec1.item(), input.size(0))",
                   ["top1.update(prec1.detach(), input.size(0))", *(["torch_xla.sync()"] if sync else [])],
                   2, which=[1])


def apply(r):
    move_to_xla(r)
    meters_on_device(r)
