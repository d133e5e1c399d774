"""The gold migration, plus the forward pass under torch.autocast("xla", dtype=torch.bfloat16),
"as TPUs prefer": the task's precision policy is fp32 (exit 0; the loss moves a little)."""

MAIN = "main.py"


def apply(r):
    r.apply_gold()
    r.replace(MAIN, "h_i, h_j, z_i, z_j = model(x_i, x_j)", [
        'with torch.autocast("xla", dtype=torch.bfloat16):  # bf16 matmuls on the MXU',
        "    h_i, h_j, z_i, z_j = model(x_i, x_j)",
    ])
