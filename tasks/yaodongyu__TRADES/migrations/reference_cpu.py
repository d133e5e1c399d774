"""The least edit that runs the original on a machine without CUDA: trades.py draws the PGD start
noise with an unconditional `.cuda()` (the script's --no-cuda does not reach it); the noise goes to
the batch's device instead, which on the CPU reference leaves it where it was drawn."""

TRADES = "trades.py"


NOISE = "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape){}.detach()"


def apply(r):
    r.replace(TRADES, NOISE.format(".cuda()"), NOISE.format(".to(x_natural.device)"))
