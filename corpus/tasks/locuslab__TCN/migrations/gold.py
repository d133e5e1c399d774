"""Gold migration of locuslab/TCN (adding problem) to torch_xla.

- weight_norm's fused kernel (aten::_weight_norm_interface) has no XLA lowering and falls back to
  the CPU every step: the same reparametrisation (w = g * v / ||v||, norm over all dims but 0) is
  computed with plain tensor ops instead; parameters and state_dict keys (weight_g, weight_v)
  stay those of torch.nn.utils.weight_norm.
- The hard-coded .cuda() calls (behind --cuda, on by default) move to the XLA device; the
  training set stays on the host and each batch moves (fixed shape, one compiled step).
- The running loss stays on the device (no loss.item() per step); one graph per step
  (xm.mark_step after optimizer.step). Gradient clipping is kept as configured.
"""

SCRIPT = "TCN/adding_problem/add_test.py"
TCN = "TCN/tcn.py"


def apply(r):
    r.insert_after(TCN, "from torch.nn.utils import weight_norm", [
        "import sys",
        "",
        "",
        "def _weight_norm_xla(v, g, dim=0):",
        "    # g * v / ||v|| with the norm over every dim but `dim`, in ops XLA lowers",
        "    dims = [d for d in range(v.dim()) if d != dim]",
        "    return v * (g / v.pow(2).sum(dim=dims, keepdim=True).sqrt())",
        "",
        "",
        "sys.modules['torch.nn.utils.weight_norm']._weight_norm = _weight_norm_xla",
    ])
    r.insert_after(SCRIPT, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(SCRIPT, "model.cuda()", ["device = xm.xla_device()", "model.to(device)"])
    # The training set stays on the host and each batch moves: slicing a device-resident tensor
    # at a Python offset bakes the offset into the graph (one compilation per step).
    r.delete(SCRIPT, "X_train = X_train.cuda()")
    r.delete(SCRIPT, "Y_train = Y_train.cuda()")
    r.insert_before(SCRIPT, "optimizer.zero_grad()", ["x, y = x.to(device), y.to(device)"])
    for name in ("X_test", "Y_test"):
        r.replace(SCRIPT, f"{name} = {name}.cuda()", f"{name} = {name}.to(device)")
    r.insert_after(SCRIPT, "optimizer.step()", ["xm.mark_step()"])
    r.replace(SCRIPT, "total_loss += loss.item()", "total_loss += loss.detach()")
