"""Every edit of the gold but the sLSTM backend: the cell keeps its default, the CUDA kernel, which
a TPU host cannot build or run."""

BACKEND = 'cfg.model.slstm_block.slstm.backend = "vanilla"  # the CUDA kernel\'s pure-PyTorch twin'


def apply(r):
    gold = r.gold
    gold.to_xla(r)
    r.delete(gold.MAIN, BACKEND)
    gold.running_loss_on_device(r)
