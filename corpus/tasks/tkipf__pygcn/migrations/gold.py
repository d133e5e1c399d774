"""Gold migration of tkipf/pygcn to torch_xla.

- Sparse COO tensors cannot move to XLA: the (small) normalised adjacency becomes dense on the
  device and the layer multiplies it with torch.mm (same arithmetic as torch.spmm).
- The project's CUDA switch becomes the XLA device: the `if args.cuda:` blocks seed the XLA RNG
  and move the tensors with .to(device); the model moves before the optimizer is built.
- One graph per epoch (xm.mark_step after the validation pass); the per-epoch log line, which
  reads four scalars on the host, is printed for the last epoch only.
"""

TRAIN = "pygcn/train.py"
LAYERS = "pygcn/layers.py"


def apply(r):
    r.insert_after(TRAIN, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(TRAIN, "args.cuda = not args.no_cuda and torch.cuda.is_available()",
              ["args.cuda = True  # the XLA device takes the place of CUDA",
               "device = xm.xla_device()"])
    r.replace(TRAIN, "torch.cuda.manual_seed(args.seed)", "xm.set_rng_state(args.seed)")
    # Module.to() cannot move parameters in place to XLA: move the model before the optimizer
    # takes its parameters, not in the `if args.cuda:` block after it.
    r.insert_before(TRAIN, "optimizer = optim.Adam(model.parameters(),", ["model.to(device)"])
    r.delete(TRAIN, "model.cuda()")
    for name in ("features", "labels", "idx_train", "idx_val", "idx_test"):
        r.replace(TRAIN, f"{name} = {name}.cuda()", f"{name} = {name}.to(device)")
    r.replace(TRAIN, "adj = adj.cuda()", "adj = adj.to_dense().to(device)")
    r.insert_before(TRAIN, "print('Epoch: {:04d}'.format(epoch+1),", ["xm.mark_step()"])
    r.replace(TRAIN, "print('Epoch: {:04d}'.format(epoch+1),",
              "if epoch + 1 == args.epochs: print('Epoch: {:04d}'.format(epoch+1),")
    r.replace(LAYERS, "output = torch.spmm(adj, support)", "output = torch.mm(adj, support)")
