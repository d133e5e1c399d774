"""Every edit of the gold, and the model is cast to bfloat16 for the TPU while the data loader
still yields float32 batches: the first layer multiplies float32 inputs by bf16 weights."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("informer_gold", Path(__file__).parents[1] / "gold.py")
gold = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gold)


def apply(r):
    gold.apply(r)
    r.replace(gold.BASIC, "self.model = self._build_model().to(self.device)",
              "self.model = self._build_model().to(self.device).to(torch.bfloat16)")
