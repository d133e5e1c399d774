"""Gold migration of yenchenlin/nerf-pytorch (run_nerf.py, NeRF with random ray batching) to PyTorch/XLA.

- The device is the XLA device instead of `cuda if available else cpu`.
- run_nerf.py's `torch.set_default_tensor_type('torch.cuda.FloatTensor')` made every tensor the
  renderer creates without a device (sample positions, stratified jitter, the 1e10 last interval,
  the ones of the transmittance product, the hierarchical sampler's draws) a CUDA tensor. Here the
  networks are built on the host as the CPU reference builds them (same initial weights for a
  seed) and moved by the project's own `.to(device)`; the XLA device becomes the default device
  after create_nerf. Two differences of set_default_device are mended: the legacy constructor
  `torch.Tensor([...])` ignores it (the 1e10 interval in raw2outputs and mse2psnr's log(10) use
  torch.tensor), and Adam creates its per-parameter step counters with the default device, where
  its non-capturable update reads them on the host (.item()) at every step: optimizer.step() runs
  under the CPU device context, so the counters stay on the host as on the reference.
- Random ray batching: the shuffled training rays stay on the host (they are drawn and shuffled
  there, by numpy, then by torch.randperm on the CPU generator after each epoch) and each step's
  batch of N_rand rays is copied to the device. Sliced on the device at a Python offset that moves
  every step, the batch would compile a new graph at every step of an epoch.
- render_rays checks every output for NaN/inf before testing DEBUG: `(isnan.any() or isinf.any())
  and DEBUG` reads each of its 8 outputs on the host at every step (16 reads, each its own graph).
  DEBUG (False) is tested first, so nothing is read.
- The hierarchical sampler inverts the CDF with torch.searchsorted, which PyTorch/XLA runs on the
  CPU (a fallback and a device round trip per step). For a sorted cdf, searchsorted(right=True)
  is the number of cdf entries <= u: the same indices from a comparison and a sum on the device.
- Every optimizer step ends with torch_xla.sync() (one graph per step).
- The project's checkpoint after the last iteration is written with xm.save (tensors moved to the
  CPU), so that evaluate.py and any machine without the XLA device can load it.
"""

TRAIN, HELPERS = "run_nerf.py", "run_nerf_helpers.py"
DEVICE_LINE = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'
DEFAULT_TYPE = "torch.set_default_tensor_type('torch.cuda.FloatTensor')"
CREATE = "render_kwargs_train, render_kwargs_test, start, grad_vars, optimizer = create_nerf(args)"
RAYS_TO_DEVICE = "rays_rgb = torch.Tensor(rays_rgb).to(device)"
BATCH = "batch = rays_rgb[i_batch:i_batch+N_rand] # [B, 2+1, 3*?]"
RANDPERM = "rand_idx = torch.randperm(rays_rgb.shape[0])"
STEP = "optimizer.step()"
SAVE = "torch.save({"
LAST_INTERVAL = ("dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[...,:1].shape)], -1)"
                 "  # [N_rays, N_samples]")
NAN_CHECK = "if (torch.isnan(ret[k]).any() or torch.isinf(ret[k]).any()) and DEBUG:"
SEARCHSORTED = "inds = torch.searchsorted(cdf, u, right=True)"
PSNR = "mse2psnr = lambda x : -10. * torch.log(x) / torch.log(torch.Tensor([10.]))"


def to_xla(r):
    r.replace(TRAIN, DEVICE_LINE, ["import torch_xla", "import torch_xla.core.xla_model as xm",
                                   "device = torch_xla.device()"])
    r.replace(TRAIN, DEFAULT_TYPE, "pass  # the XLA device becomes the default after create_nerf")


def default_device(r):
    r.insert_after(TRAIN, CREATE, ["torch.set_default_device(device)  # the networks were built on the host"])
    r.replace(TRAIN, LAST_INTERVAL,
              "dists = torch.cat([dists, torch.tensor([1e10]).expand(dists[...,:1].shape)], -1)")
    r.replace(HELPERS, PSNR, "mse2psnr = lambda x : -10. * torch.log(x) / torch.log(torch.tensor([10.]))")


def host_step_counters(r):
    r.replace(TRAIN, STEP, ["with torch.device('cpu'):  # Adam's step counters stay on the host",
                            "    optimizer.step()",
                            "torch_xla.sync()"])


def rays_on_host(r):
    r.replace(TRAIN, RAYS_TO_DEVICE, "rays_rgb = torch.tensor(rays_rgb, device='cpu')  # batches: per step")
    r.replace(TRAIN, BATCH, "batch = rays_rgb[i_batch:i_batch+N_rand].to(device)  # [B, 2+1, 3*?]")
    r.replace(TRAIN, RANDPERM, "rand_idx = torch.randperm(rays_rgb.shape[0], device='cpu')")


def no_nan_read(r):
    r.replace(TRAIN, NAN_CHECK, "if DEBUG and (torch.isnan(ret[k]).any() or torch.isinf(ret[k]).any()):")


def searchsorted_on_device(r):
    r.replace(HELPERS, SEARCHSORTED, "inds = (u[..., None] >= cdf[..., None, :]).sum(-1)  # right=True")


def checkpoint_on_host(r):
    r.replace(TRAIN, SAVE, "xm.save({")


def apply(r):
    to_xla(r)
    default_device(r)
    host_step_counters(r)
    rays_on_host(r)
    no_nan_read(r)
    searchsorted_on_device(r)
    checkpoint_on_host(r)
