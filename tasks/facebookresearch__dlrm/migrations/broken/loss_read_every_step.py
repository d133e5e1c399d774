"""The gold migration, but the loss is still copied to the host as a numpy value every step
(L = E.detach().cpu().numpy()): a host synchronisation per step (exit 0, numerics fine)."""


def apply(r):
    r.apply_gold(without=[(r.gold.SCRIPT, "L = E.detach().cpu().numpy()  # numpy array")])
