"""Gold migration of TCN's adding problem to torch_xla.

Model and per-batch data on the XLA device, the dataset kept on the host (a device-side slice at a
new offset would be a new graph every step), one graph per optimizer step, the running loss kept
on the device, and weight_norm computed from composite ops (its fused kernel falls back to CPU).
"""

SCRIPT = "TCN/adding_problem/add_test.py"

XLA_WEIGHT_NORM = '''"""weight_norm without the fused kernel, which torch_xla runs on the CPU.

Same formula as torch._weight_norm (v * g / ||v|| over all dims but `dim`), built from ops that
lower to XLA, so parameter names and values stay those of torch.nn.utils.weight_norm.
"""
import sys

import torch
import torch.nn.utils  # noqa: F401  (loads the weight_norm module patched below)


def _weight_norm(v, g, dim=0):
    return v * (g / torch.norm_except_dim(v, 2, dim))


sys.modules["torch.nn.utils.weight_norm"]._weight_norm = _weight_norm
'''


def weight_norm_on_xla(r):
    r.write("TCN/adding_problem/xla_weight_norm.py", XLA_WEIGHT_NORM)
    r.insert_after(SCRIPT, "from TCN.adding_problem.utils import data_generator", [
        "from TCN.adding_problem import xla_weight_norm  # noqa: F401",
    ])


def to_xla(r):
    """Everything but the weight_norm patch."""
    r.insert_after(SCRIPT, "import torch", [
        "import torch_xla",
        "import torch_xla.core.xla_model as xm",
    ])
    r.insert_before(SCRIPT, "if args.cuda:", ["device = torch_xla.device()"])  # --cuda: accelerator on
    r.replace(SCRIPT, "model.cuda()", "model.to(device)")
    r.delete(SCRIPT, "X_train = X_train.cuda()")
    r.delete(SCRIPT, "Y_train = Y_train.cuda()")
    r.replace(SCRIPT, "X_test = X_test.cuda()", "X_test = X_test.to(device)")
    r.replace(SCRIPT, "Y_test = Y_test.cuda()", "Y_test = Y_test.to(device)")
    r.insert_before(SCRIPT, "output = model(x)", ["x, y = x.to(device), y.to(device)"])
    r.insert_after(SCRIPT, "optimizer.step()", ["xm.mark_step()"])
    r.replace(SCRIPT, "total_loss += loss.item()", "total_loss += loss.detach()")


def apply(r):
    weight_norm_on_xla(r)
    to_xla(r)
