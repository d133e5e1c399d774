"""Gold migration of yuqinie98/PatchTST (PatchTST_supervised) to PyTorch/XLA.

The experiment's device is the XLA device where the project falls back to the CPU (it uses CUDA only
when available); the per-step loss log (`train_loss.append(loss.item())`) keeps device tensors and
reads their mean once per epoch; each optimizer step ends with a mark_step (the OneCycle schedule's
learning rate and momentum stay host floats, fed to the compiled step as data). The early-stopping
checkpoint is written with xm.save (host copies), so the project's own reload works.
"""

EXP = "PatchTST_supervised/exp/exp_main.py"
BASIC = "PatchTST_supervised/exp/exp_basic.py"
TOOLS = "PatchTST_supervised/utils/tools.py"
XM = "import torch_xla.core.xla_model as xm"


def to_xla(r, device="xm.xla_device()"):
    r.insert_after(BASIC, "import torch", [XM])
    r.replace(BASIC, "device = torch.device('cpu')", f"device = {device}")
    r.replace(BASIC, "print('Use CPU')", "print('Use XLA: {}'.format(device))")
    r.insert_after(EXP, "import torch", [XM])
    r.insert_after(EXP, "model_optim.step()", ["xm.mark_step()"])
    r.insert_after(TOOLS, "import torch", [XM])
    r.replace(TOOLS, "torch.save(model.state_dict(), path + '/' + 'checkpoint.pth')",
              "xm.save(model.state_dict(), path + '/' + 'checkpoint.pth')")


def loss_log_on_device(r):
    r.replace_each(EXP, "train_loss.append(loss.item())", "train_loss.append(loss.detach())", 2)
    r.replace(EXP, "train_loss = np.average(train_loss)",
              "train_loss = torch.stack(train_loss).mean().item()")


def apply(r):
    to_xla(r)
    loss_log_on_device(r)
