"""Gold migration of kaidic/LDAM-DRW (cifar_train.py, losses.py, utils.py) to PyTorch/XLA.

The script keeps its --gpu switch for the data path (`--gpu 0`: no DataParallel) but the device
is the XLA device, kept on args (args.device) so train() and validate() reach it: model, every
criterion of the per-epoch re-weighting rule (and its class weights) and the batches move there
with .to() where the original called .cuda(args.gpu); torch.cuda.set_device goes, and so does
DataParallel (it replicates over CUDA devices only). LDAMLoss registers its per-class margins as
a buffer, so the criterion's .to() moves them (the original built them as torch.cuda.FloatTensor),
and casts the one-hot index with .float(). In the training loop the loss meter accumulates
device tensors instead of reading loss.item() every step (the log line and the epoch's
tensorboard scalars read it then), and each step ends with one torch_xla.sync(). Validation keeps
its reads; checkpoints are written with xm.save (CPU copies).
"""

TRAIN, LOSSES, UTILS = "cifar_train.py", "losses.py", "utils.py"


def xla_device(r, device="torch_xla.device()"):
    """args.device is the XLA device; model, criterion, class weights and batches go there."""
    r.insert_after(TRAIN, "import torch", ["import torch_xla"])
    r.insert_after(TRAIN, "use_norm = True if args.loss_type == 'LDAM' else False",
                   [f"args.device = {device}"])
    r.delete(TRAIN, "torch.cuda.set_device(args.gpu)")
    r.replace(TRAIN, "model = model.cuda(args.gpu)", "model = model.to(args.device)")
    r.replace(TRAIN, "model = torch.nn.DataParallel(model).cuda()", "model = model.to(args.device)")
    r.replace(TRAIN, "checkpoint = torch.load(args.resume, map_location='cuda:0')",
              "checkpoint = torch.load(args.resume, map_location='cpu')")
    r.replace_each(TRAIN, "per_cls_weights = torch.FloatTensor(per_cls_weights).cuda(args.gpu)",
                   "per_cls_weights = torch.FloatTensor(per_cls_weights).to(args.device)", 2)
    for loss in ("nn.CrossEntropyLoss(weight=per_cls_weights)",
                 "LDAMLoss(cls_num_list=cls_num_list, max_m=0.5, s=30, weight=per_cls_weights)",
                 "FocalLoss(weight=per_cls_weights, gamma=1)"):
        r.replace(TRAIN, f"criterion = {loss}.cuda(args.gpu)", f"criterion = {loss}.to(args.device)")
    r.replace_each(TRAIN, "input = input.cuda(args.gpu, non_blocking=True)",
                   "input = input.to(args.device)", 2)
    r.replace_each(TRAIN, "target = target.cuda(args.gpu, non_blocking=True)",
                   "target = target.to(args.device)", 2)
    r.insert_after(UTILS, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(UTILS, "torch.save(state, filename)", "xm.save(state, filename)")


def ldam_on_device(r):
    """LDAMLoss: the margins a buffer (moved with the criterion), the one-hot index cast in place."""
    r.replace(LOSSES, "m_list = torch.cuda.FloatTensor(m_list)",
              "m_list = torch.tensor(m_list, dtype=torch.float32)")
    r.replace(LOSSES, "self.m_list = m_list", 'self.register_buffer("m_list", m_list)')
    r.replace(LOSSES, "index_float = index.type(torch.cuda.FloatTensor)", "index_float = index.float()")


def meters_on_device(r):
    """train(): the loss meter sums device tensors; one sync per step, after the update."""
    r.replace_each(TRAIN, "losses.update(loss.item(), input.size(0))",
                   "losses.update(loss.detach(), input.size(0))", 2, which=[1])
    r.insert_after(TRAIN, "optimizer.step()", ["torch_xla.sync()"])


def apply(r):
    xla_device(r)
    ldam_on_device(r)
    meters_on_device(r)
