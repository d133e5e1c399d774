"""The gold, but main.py's device is not handed to the runner: Diffusion.__init__ picks its own
device again (CUDA if available, else the CPU), so the model, the batches and the loss stay on the
CPU while main.py logs `Using device: xla:0` (exit 0; torch_xla.sync() has nothing to run)."""


def apply(r):
    r.apply_gold(without=[("main.py", "runner = Diffusion(args, config)")])
