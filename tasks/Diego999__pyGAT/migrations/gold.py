"""Gold migration of Diego999/pyGAT (dense GAT) to PyTorch/XLA.

The model moves to the XLA device before the optimizer is built (moving a module to XLA makes new
parameter objects, so the upstream order, optimizer first, would leave Adam updating the CPU
copies); the data follow it. Each epoch ends with one sync, then one batched transfer of the four
logged scalars: the printed line and the early-stopping value (upstream: five .item() reads) come
from it. The per-epoch checkpoint the script restores its best epoch from is written with
xm.save, which moves the whole state_dict to the CPU in one transfer.
"""

TRAIN = "train.py"
LOG = "print('Epoch: {:04d}'.format(epoch+1),"
SAVE = "torch.save(model.state_dict(), '{}.pkl'.format(epoch))"


def move_to_xla(r, device="torch_xla.device()", move_model_first=True):
    r.insert_after(TRAIN, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.replace(TRAIN, "args.cuda = not args.no_cuda and torch.cuda.is_available()",
              ["args.cuda = not args.no_cuda", f"device = {device}"])
    r.replace(TRAIN, "torch.cuda.manual_seed(args.seed)", "pass")
    if move_model_first:
        r.insert_before(TRAIN, "optimizer = optim.Adam(model.parameters(),", ["model.to(device)"])
        r.replace(TRAIN, "model.cuda()", "pass")
    else:  # where the CUDA code moved it: after the optimizer was built
        r.replace(TRAIN, "model.cuda()", "model.to(device)")
    for name in ("features", "adj", "labels", "idx_train", "idx_val", "idx_test"):
        r.replace(TRAIN, f"{name} = {name}.cuda()", f"{name} = {name}.to(device)")


def batched_log(r):
    r.insert_before(TRAIN, LOG, [
        "torch_xla.sync()",
        "# one transfer for the logged line and the early-stopping value",
        "loss_train, acc_train, loss_val, acc_val = torch.stack(",
        "    [loss_train.detach(), acc_train.float(), loss_val.detach(), acc_val.float()]).cpu()",
    ])


def save_with_xm(r):
    r.replace(TRAIN, SAVE, "xm.save(model.state_dict(), '{}.pkl'.format(epoch))")


def apply(r):
    move_to_xla(r)
    batched_log(r)
    save_with_xm(r)
