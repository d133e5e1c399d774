"""The least edit that runs the original trainer on a machine without CUDA (reference runs only).

trainer.py calls .cuda() on the model, the criterion and every batch with no switch of its own,
and two of those lines occur twice (train and validate), so they cannot be edited one by one:
right after `import torch` the two .cuda() methods become the identity. Nothing else changes.
"""

TRAINER = "trainer.py"


def apply(r):
    r.insert_after(TRAINER, "import torch", [
        "torch.nn.Module.cuda = lambda self, *args, **kwargs: self  # gpu2tpu: CPU reference",
        "torch.Tensor.cuda = lambda self, *args, **kwargs: self  # gpu2tpu: CPU reference",
    ])
