"""The gold migration, but the best weights are still saved with torch.save(model.state_dict())
on every improving epoch, as on CUDA: each save transfers every parameter from the device
(exit 0, numerics fine)."""


def apply(r):
    gold = r.gold
    gold.move_to_xla(r)
    gold.one_host_read(r)
