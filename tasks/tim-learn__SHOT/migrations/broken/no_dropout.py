"""Broken: the gold, and the dropout layers taken out of the networks (LeNetBase's Dropout2d and
feat_bottleneck's Dropout) so that the XLA run no longer depends on the device's random masks:
the parameters and state_dicts are unchanged, but the model trained is another one (exit 0)."""

NET = "digit/network.py"


def apply(r):
    r.apply_gold()
    r.delete(NET, "nn.Dropout2d(p=0.5),")
    r.delete(NET, "self.dropout = nn.Dropout(p=0.5)")
    r.delete(NET, "x = self.dropout(x)")
