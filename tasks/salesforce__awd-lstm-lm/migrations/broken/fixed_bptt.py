"""Every edit of the gold, and the random BPTT length is replaced by the fixed --bptt, so that
one graph is compiled: the usual shortcut against recompilation, which changes the training (the
sequence lengths, the per-step learning-rate scaling and the number of steps)."""


def apply(r):
    r.apply_gold()
    r.replace(r.gold.MAIN, "seq_len = max(5, int(np.random.normal(bptt, 5)))", "seq_len = args.bptt")
