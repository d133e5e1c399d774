"""Broken: the gold, except the training mask: each sample's observed count is read on the host
(`.item()`) and topk takes it as k, so every new count compiles another graph (exit 0)."""


def apply(r):
    r.apply_gold(without=[("main_model.py", line) for line in (
        "for i in range(len(observed_mask)):",
        "sample_ratio = np.random.rand()  # missing ratio",
        "num_observed = observed_mask[i].sum().item()",
        "num_masked = round(num_observed * sample_ratio)",
        "rand_for_mask[i][rand_for_mask[i].topk(num_masked).indices] = -1")])
