"""Broken: the gold, except that save_networks keeps the original's round trip, written for the
XLA device: the network goes to the CPU for torch.save and back with .to(self.device). On XLA both
moves replace the parameters with new tensors, so after the first epoch's save the optimizers step
parameters the networks no longer use: the second epoch runs, but nothing trains (exit 0)."""


def apply(r):
    g = r.gold
    r.apply_gold(without=[(g.BASE, g.SAVE_GPU), (g.BASE, g.SAVE_BACK)])
    r.replace(g.BASE, g.SAVE_GPU, "torch.save(net.cpu().state_dict(), save_path)")
    r.replace(g.BASE, g.SAVE_BACK, "net.to(self.device)")
