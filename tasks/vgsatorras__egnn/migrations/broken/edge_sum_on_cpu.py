"""Broken: the gold migration, plus a "fix" for scatter_add_ that an agent unsure of XLA support
might write: the segment sum runs on CPU copies and the result moves back, every layer, every step."""

DOCSTRING = '"""Custom PyTorch op to replicate TensorFlow\'s `unsorted_segment_sum`."""'


def apply(r):
    r.apply_gold()
    r.insert_before("models/gcl.py", "def unsorted_segment_sum(data, segment_ids, num_segments):", [
        "def _segment_sum_on_host(data, segment_ids, num_segments):",
        "    out = torch.zeros(num_segments, data.size(1), dtype=data.dtype)",
        "    index = segment_ids.cpu().unsqueeze(-1).expand(-1, data.size(1))",
        "    return out.scatter_add_(0, index, data.cpu()).to(data.device)",
        "",
        "",
    ])
    r.replace("models/gcl.py", DOCSTRING,
              "return _segment_sum_on_host(data, segment_ids, num_segments)")
