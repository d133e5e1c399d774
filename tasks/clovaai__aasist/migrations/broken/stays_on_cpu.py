"""The gold's changes but the device picked CUDA-style (cuda if available, else the CPU) with the
"GPU not detected!" check dropped: on a machine without a GPU the model, the batches and the loss
stay on the CPU while torch_xla.sync() runs on nothing. The run succeeds."""


def apply(r):
    r.apply_gold(without=[(r.gold.MAIN, r.gold.DEVICE_LINE)])
