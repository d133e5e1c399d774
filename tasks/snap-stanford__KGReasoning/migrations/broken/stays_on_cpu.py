"""Broken: every edit of the gold, but the model goes to a device chosen CUDA-style (cuda if
available, else the CPU): with no GPU the model, and the batches that follow its device, stay on
the CPU (exit 0)."""


def apply(r):
    gold = r.gold
    gold.model_to_xla(r, device='torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    gold.train_batches_to_device(r)
    gold.sync_each_step(r)
    gold.no_step_reads(r)
    gold.test_on_device(r)
