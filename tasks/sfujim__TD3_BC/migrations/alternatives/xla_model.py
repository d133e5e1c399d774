"""Another correct migration: torch_xla.core.xla_model's xla_device() in both device lines,
set_rng_state for the XLA generator, and the step boundary (xm.mark_step) at the end of
TD3_BC.train instead of in main.py's loop."""

MAIN, AGENT, BUFFER = "main.py", "TD3_BC.py", "utils.py"


def apply(r):
    for path in (AGENT, BUFFER):
        r.insert_after(path, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(AGENT, f"device = {r.gold.CUDA_DEVICE}", "device = xm.xla_device()")
    r.replace(BUFFER, f"self.device = {r.gold.CUDA_DEVICE}", "self.device = xm.xla_device()")
    r.insert_after(MAIN, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.insert_after(MAIN, "torch.manual_seed(args.seed)", ["xm.set_rng_state(args.seed)"])
    # the last statement of TD3_BC.train, one indentation level deeper than the next method
    r.insert_before(AGENT, "def save(self, filename):", ["\txm.mark_step()  # one training iteration", ""])
