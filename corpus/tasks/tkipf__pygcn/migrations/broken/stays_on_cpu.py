"""Broken: replaces the CUDA idioms (dense adjacency, .to(device)) but picks the device with
torch.cuda.is_available(): without a GPU everything trains on the CPU."""

TRAIN = "pygcn/train.py"
LAYERS = "pygcn/layers.py"


def apply(r):
    r.replace(TRAIN, "args.cuda = not args.no_cuda and torch.cuda.is_available()",
              ["args.cuda = True",
               "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')"])
    r.replace(TRAIN, "torch.cuda.manual_seed(args.seed)", "torch.manual_seed(args.seed)")
    r.replace(TRAIN, "model.cuda()", "model.to(device)")
    for name in ("features", "labels", "idx_train", "idx_val", "idx_test"):
        r.replace(TRAIN, f"{name} = {name}.cuda()", f"{name} = {name}.to(device)")
    r.replace(TRAIN, "adj = adj.cuda()", "adj = adj.to_dense().to(device)")
    r.replace(LAYERS, "output = torch.spmm(adj, support)", "output = torch.mm(adj, support)")
