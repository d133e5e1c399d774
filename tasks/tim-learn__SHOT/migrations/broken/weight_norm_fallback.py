"""Broken: every edit of the gold but the weight_norm module: netC's nn.utils.weight_norm keeps
its fused kernel (aten::_weight_norm_interface and, in the source stage, its backward), which
torch_xla runs on the CPU, with transfers, in every forward (exit 0)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r)
    gold.labels_on_device(r)
