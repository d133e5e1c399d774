"""Another correct migration: the gold's edits in torch_xla's newer spelling, torch_xla.device()
for the agent's device and torch_xla.sync() wherever the gold calls xm.mark_step()."""


def apply(r):
    ppo = r.gold.PPO
    r.gold.to_xla(r, device='torch_xla.device() if args.cuda else torch.device("cpu")')
    r.gold.clipfrac_on_device(r)
    r.replace(ppo, "import torch_xla.core.xla_model as xm", "import torch_xla")
    r.replace_each(ppo, "xm.mark_step()", "torch_xla.sync()", 2)
