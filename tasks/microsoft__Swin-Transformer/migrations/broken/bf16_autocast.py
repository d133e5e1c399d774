"""The gold, but the training forward runs under torch.autocast("xla", dtype=torch.bfloat16)
unconditionally, "TPUs want bf16", although the command asks for fp32 (--disable_amp, so
config.AMP_ENABLE is False): the task's precision policy is fp32 (exit 0; the loss moves a little)."""

MAIN = "main.py"


def apply(r):
    r.gold.process_group(r)
    r.gold.move_to_xla(r)
    r.gold.ddp(r)
    r.replace_each(MAIN, "with torch.cuda.amp.autocast(enabled=config.AMP_ENABLE):",
                   'with torch.autocast("xla", dtype=torch.bfloat16):  # bf16 matmuls on the MXU', 2,
                   which=[1])
    r.replace_each(MAIN, "with torch.cuda.amp.autocast(enabled=config.AMP_ENABLE):",
                   'with torch.autocast("xla", dtype=torch.bfloat16, enabled=config.AMP_ENABLE):', 1)
    r.gold.sync_each_step(r)
    r.gold.loss_meter_on_device(r)
    r.gold.no_loss_scaling(r)
    r.gold.checkpoints(r)
