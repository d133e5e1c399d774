"""Every edit of the gold, and the model is cast to bfloat16 for the TPU while the data loader
still yields float32 batches: the first layer multiplies float32 inputs by bf16 weights."""


def apply(r):
    r.apply_gold()
    r.replace(r.gold.BASIC, "self.model = self._build_model().to(self.device)",
              "self.model = self._build_model().to(self.device).to(torch.bfloat16)")
