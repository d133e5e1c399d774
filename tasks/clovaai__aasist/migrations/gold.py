"""Gold migration of clovaai/aasist (main.py with an AASIST-L-shaped configuration) to PyTorch/XLA.

- The device (CUDA if available, else the CPU, which main.py then refuses) becomes the XLA device;
  the model is moved before Adam is built, as upstream already does. Each training step ends with
  torch_xla.sync().
- No host read per step: train_epoch's per-step losses stay on the device (batch_loss.detach()
  instead of batch_loss.item(), kept in a list rather than added to the running int 0, so the
  first step of every epoch has the steady step's graph) and are summed and read once, at the end
  of the epoch, for the epoch's print and the TensorBoard scalar.
- Static shapes with freq_aug: the sinc front end (models/AASIST.py, CONV.forward) zeroes a random
  band of A filters from A0 in every training step (numpy and random draw A and A0 on the host).
  Upstream moves the fixed filter bank to the device first and writes the zeros there: a slice
  whose bounds change every step, so every step compiles its own graph. The filter bank is masked
  on the host (the same draws, the same zeros) and moved afterwards: the device only ever sees a
  (70, 17) input tensor.

- The graph is also cut after SWA's two pieces of work outside the training step: the snapshot
  (optimizer_swa.update_swa(): each buffer += (weight - buffer) / (n + 1)) and, at the end, the
  BatchNorm update (optimizer_swa.bn_update: train-mode forwards over the training loader that only
  rewrite the running statistics). Left pending, the snapshot joins the next training step's graph
  (a step graph of its own, a ~20 s compilation on the XLA CPU device, after every snapshot), and
  the BatchNorm update's four forwards are recomputed inside every graph that reads a running
  statistic afterwards: each final-evaluation batch and each of the ~40 tensors torch.save reads
  one at a time (the gold's final phase took ~40 compilations and ~3 minutes that way).

Kept as upstream: the evaluation loops (one .cpu() per batch, after each epoch), the SWA snapshot
(torchcontrib), its BatchNorm update and the saved state_dicts.
"""

MAIN, MODEL = "main.py", "models/AASIST.py"
DEVICE_LINE = 'device = "cuda" if torch.cuda.is_available() else "cpu"'
STEP_READ = "running_loss += batch_loss.item() * batch_size"
EPOCH_MEAN = "running_loss /= num_total"
FILTER_TO_DEVICE = "band_pass_filter = self.band_pass.clone().to(x.device)"
FILTER_VIEW = "self.filters = (band_pass_filter).view(self.out_channels, 1,"
SWA_SNAPSHOT = "optimizer_swa.update_swa()"
SWA_BN_UPDATE = "optimizer_swa.bn_update(trn_loader, model, device=device)"


def to_xla(r, barrier="torch_xla.sync()"):
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.replace(MAIN, DEVICE_LINE, "device = torch_xla.device()")
    r.delete(MAIN, 'if device == "cpu":')
    r.delete(MAIN, 'raise ValueError("GPU not detected!")')
    if barrier:
        r.insert_after(MAIN, "optim.step()", [barrier])
    swa_cuts(r, barrier or "torch_xla.sync()")


def swa_cuts(r, barrier):
    r.insert_after(MAIN, SWA_SNAPSHOT, [barrier + "  # the SWA buffers, apart from the next step"])
    r.insert_after(MAIN, SWA_BN_UPDATE, [barrier + "  # the BatchNorm statistics, computed once"])


def no_step_reads(r):
    r.insert_after(MAIN, "running_loss = 0", ["step_losses = []  # on the device, read once an epoch"])
    r.replace(MAIN, STEP_READ, "step_losses.append(batch_loss.detach() * batch_size)")
    r.replace(MAIN, EPOCH_MEAN, "running_loss = float(torch.stack(step_losses).sum()) / num_total")


def host_mask(r):
    r.replace(MODEL, FILTER_TO_DEVICE, "band_pass_filter = self.band_pass.clone()  # masked on the host")
    r.insert_before(MODEL, FILTER_VIEW, ["band_pass_filter = band_pass_filter.to(x.device)"])


def apply(r):
    to_xla(r)
    no_step_reads(r)
    host_mask(r)
