"""Alternative: the gold's device placement, with the per-iteration sync inside the model
(torch_xla.sync() at the end of BiCycleGANModel.optimize_parameters, after the D updates) instead
of train.py, and the networks saved as a state_dict of CPU copies with torch.save."""

MODEL = "models/bicycle_gan_model.py"


def apply(r):
    g = r.gold
    r.apply_gold(without=[(g.TRAIN, "import time"), (g.TRAIN, g.STEP), (g.BASE, g.SAVE_GPU)])
    r.insert_after(MODEL, "import torch", ["import torch_xla"])
    r.insert_after(MODEL, "self.update_D()", ["torch_xla.sync()  # one graph per iteration"])
    r.replace(g.BASE, g.SAVE_GPU, [
        "# CPU copies of the tensors: the network itself stays on the XLA device",
        "torch.save({k: v.cpu() for k, v in net.state_dict().items()}, save_path)",
    ])
