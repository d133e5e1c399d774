"""Another correct migration: the device named `torch.device("xla")`, and the training batches brought
to it by torch_xla's MpDeviceLoader (which also ends each step's graph) in place of the gold's
`xm.mark_step()`; the project's own `.to(self.device)` calls become no-ops."""


def apply(r):
    gold = r.gold
    r.apply_gold(without=[(gold.BASIC, "device = torch.device('cpu')"), (gold.EXP, "model_optim.step()")])
    r.replace(gold.BASIC, "device = torch.device('cpu')", "device = torch.device('xla')")
    r.insert_after(gold.EXP, gold.XM, ["import torch_xla.distributed.parallel_loader as pl"])
    r.replace(gold.EXP, "for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(train_loader):",
              "for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate("
              "pl.MpDeviceLoader(train_loader, self.device)):")
