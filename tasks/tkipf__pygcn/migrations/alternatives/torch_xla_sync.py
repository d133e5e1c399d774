"""Another correct migration: `torch_xla.device()` and `torch_xla.sync()` instead of the gold's
xm.xla_device() and xm.mark_step(), and the last epoch's four logged scalars fetched in one batched
transfer (torch.stack(...).cpu()) instead of four .item() reads. Model moved before the optimizer,
dense adjacency and dense product as the gold."""

TRAIN, LAYERS = "pygcn/train.py", "pygcn/layers.py"
LOG = "print('Epoch: {:04d}'.format(epoch+1),"


def apply(r):
    r.insert_after(TRAIN, "import torch", ["import torch_xla"])
    r.replace(TRAIN, "args.cuda = not args.no_cuda and torch.cuda.is_available()",
              ["args.cuda = not args.no_cuda", "device = torch_xla.device()"])
    r.replace(TRAIN, "torch.cuda.manual_seed(args.seed)", "pass")
    r.insert_before(TRAIN, "optimizer = optim.Adam(model.parameters(),", ["model = model.to(device)"])
    r.replace(TRAIN, "model.cuda()", "pass")
    for name in ("features", "labels", "idx_train", "idx_val", "idx_test"):
        r.replace(TRAIN, f"{name} = {name}.cuda()", f"{name} = {name}.to(device)")
    r.replace(TRAIN, "adj = adj.cuda()", "adj = adj.to_dense().to(device)")
    r.replace(LAYERS, "output = torch.spmm(adj, support)", "output = adj @ support")
    r.insert_before(TRAIN, LOG, [
        "torch_xla.sync()",
        "if epoch + 1 < args.epochs:",
        "    return",
        "loss_train, acc_train, loss_val, acc_val = torch.stack(",
        "    [loss_train.detach(), acc_train.float(), loss_val.detach(), acc_val.float()]).cpu()",
    ])
