"""The gold without the gradient clipping: an agent that takes clip_grad_norm_ for a host sync on
XLA (it is not: with error_if_nonfinite=False the total norm stays on the device) deletes it
. The run takes its 16 steps with unclipped gradients; the
project clips every step to a norm of 1.0.
"""

CLIP = "torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)"


def apply(r):
    r.gold.apply(r)
    r.delete(r.gold.TRAIN, CLIP)
