"""Another correct migration: `torch_xla.device()` and `torch_xla.sync()` instead of xm's, and each
table's sum pooling written as F.embedding rows scatter-added into their bags (the bag of each row
counted from offsets by comparison) instead of the gold's index_select + index_add with a cumsum.
Host-side padding to fixed shapes, the loss kept on the device and the same weights as the gold."""

SCRIPT = "dlrm_s_pytorch.py"

BAG_SUM = '''"""EmbeddingBag(mode="sum") pooling with fixed shapes for XLA (gpu2tpu alternative migration)."""
import torch
import torch.nn.functional as F


def fixed_bags(offsets, indices, size):
    """Host side: each table's indices zero-padded to `size`; the padding forms one extra bag."""
    counts = torch.tensor([[len(s)] for s in indices], dtype=offsets.dtype)
    return torch.cat([offsets, counts], dim=1), [F.pad(s, (0, size - len(s))) for s in indices]


def bag_sum(weight, indices, offsets, per_sample_weights=None):
    """Sums the rows of `weight` per bag; the last (padding) bag is dropped."""
    rows = F.embedding(indices, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    positions = torch.arange(indices.shape[0], device=indices.device)
    bag_of_row = (positions.unsqueeze(0) >= offsets.unsqueeze(1)).sum(0) - 1
    out = torch.zeros(offsets.shape[0], rows.shape[1], dtype=rows.dtype, device=rows.device)
    return out.scatter_add(0, bag_of_row.unsqueeze(1).expand_as(rows), rows)[:-1]
'''


def apply(r):
    r.write("xla_bag_sum.py", BAG_SUM)
    r.insert_after(SCRIPT, "import torch.nn as nn", [
        "import torch_xla", "from functools import partial", "from xla_bag_sum import bag_sum, fixed_bags"])
    r.replace(SCRIPT, 'device = torch.device("cpu")', "device = torch_xla.device()")
    r.replace(SCRIPT, "return dlrm(X.to(device), lS_o, lS_i)", [
        "lS_o, lS_i = fixed_bags(lS_o, lS_i, args.mini_batch_size * args.num_indices_per_lookup)",
        "return dlrm(X.to(device), lS_o.to(device), [S_i.to(device) for S_i in lS_i])",
    ])
    r.insert_before(SCRIPT, "optimizer = opts[args.optimizer](parameters, lr=args.learning_rate)",
                    ["dlrm = dlrm.to(device)"])
    r.insert_after(SCRIPT, "lr_scheduler.step()", ["torch_xla.sync()"])
    r.replace(SCRIPT, "L = E.detach().cpu().numpy()  # numpy array", "L = E.detach()")
    r.replace(SCRIPT, "E = emb_l[k]", "E = partial(bag_sum, emb_l[k].weight)")
