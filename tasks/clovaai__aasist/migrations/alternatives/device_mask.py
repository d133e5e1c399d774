"""Another correct migration: the sinc filter bank becomes a non-persistent buffer (it moves to
the device with the model, and the state_dict is unchanged), and the frequency mask is a (70, 1)
keep vector built on the host from the same draws and multiplied in on the device: one graph, the
same zeros. The rest as the gold, with xm.mark_step() as the barrier."""

BANK = "self.band_pass = torch.zeros(self.out_channels, self.kernel_size)"
ZERO = "band_pass_filter[A0:A0 + A, :] = 0"


def apply(r):
    gold = r.gold
    gold.to_xla(r, barrier="xm.mark_step()")
    r.insert_after(gold.MAIN, "import torch.nn as nn", ["import torch_xla.core.xla_model as xm"])
    gold.no_step_reads(r)
    r.replace(gold.MODEL, BANK, [
        "self.register_buffer(\"band_pass\", torch.zeros(self.out_channels, self.kernel_size),",
        "                     persistent=False)",
    ])
    r.replace(gold.MODEL, ZERO, [
        "keep = torch.ones(band_pass_filter.shape[0], 1)",
        "keep[A0:A0 + A] = 0",
        "band_pass_filter = band_pass_filter * keep.to(band_pass_filter.device)",
    ])
