"""Gold migration of salesforce/awd-lstm-lm to PyTorch/XLA.

Model and criterion go to the XLA device instead of CUDA (the project's --cuda switch still
selects the accelerator); moving a module to XLA makes new parameter objects one by one, which
unties the decoder from the embedding, so the tie is made again after the move. The batchified
corpus stays on the host and each batch is moved when it is cut (slicing a device tensor at the
advancing offset would compile a new graph every step, as the offset is a constant of the graph).
Each training step and each evaluation chunk ends with a mark_step, so the lazy graph is cut per
step. The random BPTT length stays: it is the project's training method, and each distinct length
compiles once.
"""

MAIN, UTILS = "main.py", "utils.py"


def to_xla(r, device="xm.xla_device()", retie=True):
    r.insert_after(MAIN, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.insert_after(UTILS, "import torch", ["import torch_xla.core.xla_model as xm"])
    # batches are cut on the host and moved per step: a slice of a device tensor at a varying
    # offset would be a new graph every step
    r.replace(UTILS, "data = data.cuda()", "pass")
    r.replace(UTILS, "return data, target", f"return data.to({device}), target.to({device})")
    r.replace(MAIN, "model = model.cuda()", f"model = model.to({device})"
              + ("; model.decoder.weight = model.encoder.weight" if retie else ""))
    r.replace(MAIN, "criterion = criterion.cuda()", f"criterion = criterion.to({device})")


def cut_graphs(r):
    r.insert_after(MAIN, "optimizer.step()", ["xm.mark_step()"])
    # the first of the two is evaluate()'s, once per chunk
    r.replace_each(MAIN, "hidden = repackage_hidden(hidden)",
                   ["hidden = repackage_hidden(hidden)", "xm.mark_step()"], 2, which=[1])


def apply(r):
    to_xla(r)
    cut_graphs(r)
