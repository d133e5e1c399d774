"""The gold without its device change: `torch.device('cuda' if torch.cuda.is_available() else
'cpu')` is left, so on a TPU host (no CUDA) the model, the batches and the loss stay on the CPU.
torch_xla is imported and torch_xla.sync() is called after every step, so the run looks migrated
and finishes normally.
"""


def apply(r):
    r.apply_gold(without=[(r.gold.TRAIN, r.gold.DEVICE)])
