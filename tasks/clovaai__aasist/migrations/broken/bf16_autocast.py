"""The gold plus a bfloat16 autocast around the training forward (a common TPU speed-up): the
task's precision policy is fp32."""

FORWARD = '_, batch_out = model(batch_x, Freq_aug=str_to_bool(config["freq_aug"]))'


def apply(r):
    r.apply_gold()
    r.replace(r.gold.MAIN, FORWARD, [
        "with torch.autocast(device_type=\"xla\", dtype=torch.bfloat16):",
        "    " + FORWARD,
    ])
