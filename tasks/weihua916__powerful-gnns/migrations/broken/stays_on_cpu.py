"""Broken: every edit of the gold (dense padded matrices, masked BatchNorm, mark_step, no per-step
read), but the device is still chosen CUDA-style: with no GPU the whole run stays on the CPU
(exit 0)."""


def apply(r):
    gold = r.gold
    gold.to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    gold.dense_graph_ops(r)
    gold.masked_norms(r)
    gold.no_step_reads(r)
