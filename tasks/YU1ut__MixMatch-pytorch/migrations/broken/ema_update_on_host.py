"""The gold, except that the EMA model lives on the host: create_model moves only the trained
model, the step syncs after Adam so that WeightEMA.step can copy each parameter and buffer of the
device model to the CPU (`param.cpu()`) and average it in there, and validation (which evaluates
the EMA model) keeps its batches on the CPU. It trains and evaluates the same numbers, but every
step moves the whole model to the host (exit 0)."""

TRAIN = "train.py"


def apply(r):
    r.apply_gold(without=[(TRAIN, "model = model.cuda()"),
                          (TRAIN, "inputs, targets = inputs.cuda(), targets.cuda(non_blocking=True)")])
    r.replace(TRAIN, "model = model.cuda()", "model = model if ema else model.to(device)  # EMA on the host")
    r.insert_after(TRAIN, "optimizer.step()", ["torch_xla.sync()  # the updated weights, for the host EMA"])
    r.replace(TRAIN, "ema_param.add_(param * one_minus_alpha)",
              "ema_param.add_(param.cpu() * one_minus_alpha)")
    r.replace(TRAIN, "inputs, targets = inputs.cuda(), targets.cuda(non_blocking=True)",
              "pass  # the EMA model evaluates on the host")
