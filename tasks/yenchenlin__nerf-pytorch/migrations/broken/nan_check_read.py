"""The gold, but render_rays' NaN/inf check is left as the project wrote it: the check is computed
before DEBUG is tested, so each of the 8 outputs is read on the host at every step."""


def apply(r):
    r.apply_gold(without=[(r.gold.TRAIN, r.gold.NAN_CHECK)])
