"""Rewrites the option-A shortcut of resnet.py (a LambdaLayer around F.pad of a strided slice)
as explicit zero channels, taking it for an XLA hazard: resnet.py is protected (the model's
definition), so the migration is refused before it runs."""


def apply(r):
    r.insert_after("resnet.py", "import torch.nn.init as init", [
        "",
        "",
        "def _shortcut_a(x, planes):  # gpu2tpu broken recipe: an edit of the protected model",
        "    x = x[:, :, ::2, ::2]",
        "    zeros = x.new_zeros(x.size(0), planes // 4, x.size(2), x.size(3))",
        "    return torch.cat([zeros, x, zeros], dim=1)",
    ])
