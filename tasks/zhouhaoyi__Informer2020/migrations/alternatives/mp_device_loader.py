"""Another correct migration: the training batches come through pl.MpDeviceLoader (the transfer
and a graph cut per batch) and each step is xm.optimizer_step(model_optim) instead of step plus
mark_step; the decoder input's padding is made on the batch's device. Same loader (order,
batch size), loss log on the device and xm.save checkpoint as the gold."""

TRAIN_LOOP = "for i, (batch_x,batch_y,batch_x_mark,batch_y_mark) in enumerate(train_loader):"
ZERO_PADDING = "dec_inp = torch.zeros([batch_y.shape[0], self.args.pred_len, batch_y.shape[-1]]).float()"
ONE_PADDING = ZERO_PADDING.replace("torch.zeros", "torch.ones")


def apply(r):
    exp = r.gold.EXP
    r.apply_gold(without=[(exp, "model_optim.step()")])
    r.replace(exp, "model_optim.step()", "xm.optimizer_step(model_optim)")
    r.insert_after(exp, "import torch_xla.core.xla_model as xm",
                   ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(exp, TRAIN_LOOP, TRAIN_LOOP.replace("enumerate(train_loader)",
                                                  "enumerate(pl.MpDeviceLoader(train_loader, self.device))"))
    for padding in (ZERO_PADDING, ONE_PADDING):
        r.replace(exp, padding,
                  padding.replace("batch_y.shape[-1]])", "batch_y.shape[-1]], device=batch_y.device)"))
