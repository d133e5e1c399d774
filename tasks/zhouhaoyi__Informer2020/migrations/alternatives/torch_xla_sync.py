"""Another correct migration: `torch_xla.device()` and `torch_xla.sync()` instead of the gold's
xm.xla_device() and xm.mark_step(), and the early-stopping checkpoint written with torch.save of a
host copy of the state_dict instead of xm.save. Loss log on the device as the gold."""

EXP, BASIC, TOOLS = "exp/exp_informer.py", "exp/exp_basic.py", "utils/tools.py"
SAVE = "torch.save(model.state_dict(), path+'/'+'checkpoint.pth')"


def apply(r):
    r.insert_after(BASIC, "import torch", ["import torch_xla"])
    r.replace(BASIC, "device = torch.device('cpu')", "device = torch_xla.device()")
    r.replace(BASIC, "print('Use CPU')", "print('Use XLA')")
    r.insert_after(EXP, "import torch", ["import torch_xla"])
    r.insert_after(EXP, "model_optim.step()", ["torch_xla.sync()"])
    r.gold.loss_log_on_device(r)
    r.replace(TOOLS, SAVE, SAVE.replace("model.state_dict()",
                                        "{k: v.cpu() for k, v in model.state_dict().items()}"))
