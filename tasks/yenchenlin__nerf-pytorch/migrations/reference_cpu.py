"""Reference on a machine without CUDA: run_nerf.py's __main__ makes torch.cuda.FloatTensor the
default tensor type unconditionally (its device line already falls back to the CPU). The least
edit: the default tensor type is the CPU's float tensor; nothing else changes."""

TRAIN = "run_nerf.py"


def apply(r):
    r.replace(TRAIN, "torch.set_default_tensor_type('torch.cuda.FloatTensor')",
              "torch.set_default_tensor_type('torch.FloatTensor')")
