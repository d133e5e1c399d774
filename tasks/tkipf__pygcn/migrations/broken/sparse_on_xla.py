"""Moves everything, the sparse COO adjacency included, to the XLA device as the CUDA code did:
sparse tensors do not exist on XLA, so the run crashes."""


def apply(r):
    train = "pygcn/train.py"
    r.insert_after(train, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(train, "args.cuda = not args.no_cuda and torch.cuda.is_available()",
              ["args.cuda = not args.no_cuda", "device = xm.xla_device()"])
    r.replace(train, "model.cuda()", "model.to(device)")
    for name in ("features", "adj", "labels", "idx_train", "idx_val", "idx_test"):
        r.replace(train, f"{name} = {name}.cuda()", f"{name} = {name}.to(device)")
