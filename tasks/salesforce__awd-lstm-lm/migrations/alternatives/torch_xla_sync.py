"""Another correct migration: the newer `torch_xla` API (one `torch_xla.device()` kept in `utils.py`
and `torch_xla.sync()` to cut the graph) where the gold calls `xm.xla_device()` and `xm.mark_step()`."""

MAIN, UTILS = "main.py", "utils.py"


def apply(r):
    r.insert_after(UTILS, "import torch", ["import torch_xla", "", "DEVICE = torch_xla.device()"])
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.replace(MAIN, "from utils import batchify, get_batch, repackage_hidden",
              "from utils import DEVICE, batchify, get_batch, repackage_hidden")
    # the batchified corpus stays on the host; each cut batch goes to the device (a device slice at
    # a moving offset would compile a graph per step)
    r.replace(UTILS, "data = data.cuda()", "pass")
    r.replace(UTILS, "return data, target", "return data.to(DEVICE), target.to(DEVICE)")
    # the move makes new parameter objects, so the decoder is tied to the embedding again
    r.replace(MAIN, "model = model.cuda()",
              ["model = model.to(DEVICE)", "model.decoder.weight = model.encoder.weight"])
    r.replace(MAIN, "criterion = criterion.cuda()", "criterion = criterion.to(DEVICE)")
    r.insert_after(MAIN, "optimizer.step()", ["torch_xla.sync()"])
    # the first of the two is evaluate()'s, once per chunk
    r.replace_each(MAIN, "hidden = repackage_hidden(hidden)",
                   ["hidden = repackage_hidden(hidden)", "torch_xla.sync()"], 2, which=[1])
