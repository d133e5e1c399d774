"""Broken: the gold, with the requires_grad toggles around the latent regression removed (e.g. as
host-side overhead between the two backward passes): the encoder now also receives the gradient of
|E(G(A, z_random)) - z_random|, which the original keeps for the generator alone (exit 0)."""

MODEL = "models/bicycle_gan_model.py"


def apply(r):
    r.apply_gold()
    r.delete(MODEL, "self.set_requires_grad([self.netE], False)")
    r.delete(MODEL, "self.set_requires_grad([self.netE], True)")
