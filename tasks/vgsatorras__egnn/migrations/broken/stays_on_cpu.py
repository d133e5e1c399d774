"""Broken: imports torch_xla and removes the per-batch host reads, but keeps the project's device
choice (CUDA if available, else CPU): without a GPU the model trains on the CPU."""

SCRIPT = "main_nbody.py"


def apply(r):
    r.insert_after(SCRIPT, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(SCRIPT, "res['loss'] += loss.item()*batch_size", "res['loss'] += loss.detach()*batch_size")
    r.insert_after(SCRIPT, "res['counter'] += batch_size", ["xm.mark_step()"])
    r.replace(SCRIPT, "return res['loss'] / res['counter']", "return float(res['loss']) / res['counter']")
