"""Gold migration of vgsatorras/egnn (n-body, EGNN_vel) to torch_xla.

- The device (CUDA or CPU by --no-cuda) becomes the XLA device; the models move themselves to it
  in __init__, before the optimizer is built. The segment sums (scatter_add_) lower on XLA.
- The running loss stays on the device (no loss.item() per batch): one host read per pass, when
  the epoch's mean is returned. One graph per batch (xm.mark_step after each batch).
"""

SCRIPT = "main_nbody.py"


def apply(r):
    r.insert_after(SCRIPT, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(SCRIPT, 'device = torch.device("cuda" if args.cuda else "cpu")', "device = xm.xla_device()")
    r.replace(SCRIPT, "res['loss'] += loss.item()*batch_size", "res['loss'] += loss.detach()*batch_size")
    r.insert_after(SCRIPT, "res['counter'] += batch_size", ["xm.mark_step()"])
    r.replace(SCRIPT, "return res['loss'] / res['counter']", "return float(res['loss']) / res['counter']")
