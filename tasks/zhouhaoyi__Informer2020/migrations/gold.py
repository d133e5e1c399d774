"""Gold migration of zhouhaoyi/Informer2020 to PyTorch/XLA.

The experiment's device is the XLA device where the project falls back to the CPU (it uses CUDA
only when available); the per-step loss log (`train_loss.append(loss.item())`) keeps device
tensors and reads their mean once per epoch; each optimizer step ends with a mark_step. The early
stopping checkpoint is written with xm.save (host copies), so the project's own reload works.
"""

EXP, BASIC, TOOLS = "exp/exp_informer.py", "exp/exp_basic.py", "utils/tools.py"


def to_xla(r):
    r.insert_after(BASIC, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(BASIC, "device = torch.device('cpu')", "device = xm.xla_device()")
    r.replace(BASIC, "print('Use CPU')", "print('Use XLA')")
    r.insert_after(EXP, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.insert_after(EXP, "model_optim.step()", ["xm.mark_step()"])
    r.insert_after(TOOLS, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(TOOLS, "torch.save(model.state_dict(), path+'/'+'checkpoint.pth')",
              "xm.save(model.state_dict(), path+'/'+'checkpoint.pth')")


def loss_log_on_device(r):
    r.replace(EXP, "train_loss.append(loss.item())", "train_loss.append(loss.detach())")
    r.replace(EXP, "train_loss = np.average(train_loss)",
              "train_loss = torch.stack(train_loss).mean().item()")


def apply(r):
    to_xla(r)
    loss_log_on_device(r)
