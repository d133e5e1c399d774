"""The least edit that runs the original on a machine without CUDA (the script has no CUDA
switch: --gpu 0 pins the device, and LDAMLoss builds its margins as torch.cuda.FloatTensor):
every `.cuda(...)` becomes `.cpu()`, torch.cuda.FloatTensor becomes torch.FloatTensor and
torch.cuda.set_device goes."""

TRAIN, LOSSES = "cifar_train.py", "losses.py"


def apply(r):
    r.delete(TRAIN, "torch.cuda.set_device(args.gpu)")
    r.replace(TRAIN, "model = model.cuda(args.gpu)", "model = model.cpu()")
    r.replace_each(TRAIN, "per_cls_weights = torch.FloatTensor(per_cls_weights).cuda(args.gpu)",
                   "per_cls_weights = torch.FloatTensor(per_cls_weights).cpu()", 2)
    for loss in ("nn.CrossEntropyLoss(weight=per_cls_weights)",
                 "LDAMLoss(cls_num_list=cls_num_list, max_m=0.5, s=30, weight=per_cls_weights)",
                 "FocalLoss(weight=per_cls_weights, gamma=1)"):
        r.replace(TRAIN, f"criterion = {loss}.cuda(args.gpu)", f"criterion = {loss}.cpu()")
    r.replace_each(TRAIN, "input = input.cuda(args.gpu, non_blocking=True)", "input = input.cpu()", 2)
    r.replace_each(TRAIN, "target = target.cuda(args.gpu, non_blocking=True)", "target = target.cpu()", 2)
    r.replace(LOSSES, "m_list = torch.cuda.FloatTensor(m_list)", "m_list = torch.FloatTensor(m_list)")
    r.replace(LOSSES, "index_float = index.type(torch.cuda.FloatTensor)",
              "index_float = index.type(torch.FloatTensor)")
