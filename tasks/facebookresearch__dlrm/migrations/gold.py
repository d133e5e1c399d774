"""Gold migration of facebookresearch/dlrm (dlrm_s_pytorch.py, random data) to PyTorch/XLA.

The CPU branch's device becomes the XLA device; model and every input (dense features, offsets
and each table's indices) move there. nn.EmbeddingBag(sparse=True) has no XLA kernel (it falls
back to the CPU, and its sparse gradients cannot live on XLA), so each table's sum-pooled lookup
is computed by our SumBag (index_select + index_add_ with fixed shapes) on the same weight, so
the state_dict is unchanged and SGD's dense update equals the sparse one. The project's generator
de-duplicates each bag's random indices, so the number of lookups varies per batch: on the host,
before the transfer, each table's indices are padded to the fixed bags * lookups and an extra
offset sends the padding to one extra bag that SumBag drops, so every step has the same shapes.
The per-step loss read (.cpu().numpy()) stays on the device until the print; each step ends
with a mark_step.
"""

SCRIPT = "dlrm_s_pytorch.py"

SUM_BAG = '''"""EmbeddingBag(mode="sum") pooling with fixed shapes for XLA (gpu2tpu gold migration)."""
import torch


class SumBag:
    """Pools rows of `bag.weight` per bag as nn.EmbeddingBag(mode="sum") with offsets does."""

    def __init__(self, bag):
        self.weight = bag.weight

    def __call__(self, indices, offsets, per_sample_weights=None):
        rows = self.weight.index_select(0, indices)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.unsqueeze(1)
        n, bags = indices.shape[0], offsets.shape[0]
        # one slot past the end: the padding bag's offset is n when no index was de-duplicated
        starts = torch.zeros(n + 1, dtype=torch.long, device=indices.device)
        starts = starts.index_add(0, offsets[1:], torch.ones_like(offsets[1:]))
        bag_of_row = torch.cumsum(starts, 0)[:n]
        out = torch.zeros(bags, rows.shape[1], dtype=rows.dtype, device=rows.device)
        return out.index_add(0, bag_of_row, rows)[:-1]  # the last bag holds the padding


def pad_bags(offsets, indices, size):
    """Host side: pad each table's indices to `size` and add one offset for a padding bag."""
    lengths = torch.tensor([[len(s)] for s in indices], dtype=offsets.dtype)
    padded = [torch.cat([s, s.new_zeros(size - len(s))]) for s in indices]
    return torch.cat([offsets, lengths], dim=1), padded
'''


def to_xla(r):
    """Device, inputs, model and step boundary on XLA (shared by the broken recipes)."""
    r.insert_after(SCRIPT, "import torch.nn as nn", ["import torch_xla.core.xla_model as xm"])
    r.replace(SCRIPT, 'device = torch.device("cpu")', "device = xm.xla_device()")
    r.replace(SCRIPT, "return dlrm(X.to(device), lS_o, lS_i)",
              "return dlrm(X.to(device), lS_o.to(device), [S_i.to(device) for S_i in lS_i])")
    r.insert_before(SCRIPT, "optimizer = opts[args.optimizer](parameters, lr=args.learning_rate)",
                    ["dlrm = dlrm.to(device)"])
    r.insert_after(SCRIPT, "lr_scheduler.step()", ["xm.mark_step()"])
    r.replace(SCRIPT, "L = E.detach().cpu().numpy()  # numpy array", "L = E.detach()")


def apply(r):
    r.insert_before(SCRIPT, "return dlrm(X.to(device), lS_o, lS_i)",
                    ["size = args.mini_batch_size * args.num_indices_per_lookup",
                     "lS_o, lS_i = pad_bags(lS_o, lS_i, size)"])
    to_xla(r)
    r.write("xla_sum_bag.py", SUM_BAG)
    r.insert_after(SCRIPT, "import torch_xla.core.xla_model as xm",
                   ["from xla_sum_bag import SumBag, pad_bags"])
    r.replace(SCRIPT, "E = emb_l[k]", "E = SumBag(emb_l[k])")
