"""The gold migration, plus NT_Xent's correlation mask moved to the device of the similarities
("every tensor on the XLA device"): boolean-mask indexing with a device mask needs nonzero() of
data the graph has not computed yet, a data-dependent shape that torch_xla runs as a CPU fallback
(aten::nonzero) every step. Exit 0, same loss values."""

NT_XENT = "simclr/modules/nt_xent.py"


def apply(r):
    r.apply_gold()
    r.replace(NT_XENT, "negative_samples = sim[self.mask].reshape(N, -1)",
              "negative_samples = sim[self.mask.to(sim.device)].reshape(N, -1)")
