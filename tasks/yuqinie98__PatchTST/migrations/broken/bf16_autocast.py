"""The gold, and the training forward wrapped in bfloat16 autocast on the XLA device ("TPUs want
bf16"), where the task's precision policy is fp32."""


def apply(r):
    r.apply_gold()
    r.replace_each(r.gold.EXP, "outputs = self.model(batch_x)",
                   ["with torch.autocast('xla', dtype=torch.bfloat16):", "    outputs = self.model(batch_x)"],
                   8, which=[4])
