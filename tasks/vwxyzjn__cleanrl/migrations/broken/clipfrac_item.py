"""Every edit of the gold but the clip fraction: the original's `.item()` after every minibatch
stays, one host read per optimizer step beyond the environment's."""


def apply(r):
    r.gold.to_xla(r)
