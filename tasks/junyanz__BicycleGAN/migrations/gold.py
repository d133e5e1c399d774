"""Gold migration of junyanz/BicycleGAN (train.py, --model bicycle_gan) to PyTorch/XLA.

- `--gpu_ids` keeps its meaning (a non-empty list: run on the accelerator), but the accelerator is
  the XLA device: options/base_options.py no longer selects a CUDA device, BaseModel's device is
  the XLA device, and init_net moves each network there without the DataParallel wrapper (one
  chip; the state_dict keys lose their `module.` prefix, which the original only has on a GPU).
- save_networks (called at the end of every epoch, so in the middle of training) saved the CUDA
  networks with `net.module.cpu()` then moved them back with `net.cuda()`; on XLA that round trip
  would replace the parameters with new tensors that the optimizers no longer hold, and without
  a GPU the original's other branch (`net.cpu()`) would leave the networks on the host. The
  networks stay on the device and xm.save writes a CPU copy of their state_dict.
- One graph per iteration: a mark_step after model.optimize_parameters() (the forward, the G and
  E update, the D and D2 updates: four optimizer steps).
- Left alone: the latent codes drawn on the host with torch.randn and sent to the device (the same
  draws as the original's), the losses read every --print_freq images and the images saved every
  --display_freq images (host reads at the project's own cadence).
"""

TRAIN = "train.py"
OPTIONS = "options/base_options.py"
BASE = "models/base_model.py"
NETWORKS = "models/networks.py"
XM = "import torch_xla.core.xla_model as xm"

SET_DEVICE = "torch.cuda.set_device(opt.gpu_ids[0])"
DEVICE = ("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0])) if self.gpu_ids "
          "else torch.device('cpu')  # get device name: CPU or GPU")
SAVE_IF = "if len(self.gpu_ids) > 0 and torch.cuda.is_available():"
SAVE_GPU = "torch.save(net.module.cpu().state_dict(), save_path)"
SAVE_BACK = "net.cuda(self.gpu_ids[0])"
INIT_ASSERT = "assert(torch.cuda.is_available())"
INIT_TO = "net.to(gpu_ids[0])"
INIT_DP = "net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs"
STEP = "model.optimize_parameters()   # calculate loss functions, get gradients, update network weights"


def to_xla(r):
    r.replace(OPTIONS, SET_DEVICE, "pass  # the accelerator is the XLA device: no CUDA device to select")
    r.insert_after(BASE, "import torch", [XM])
    r.replace(BASE, DEVICE, "self.device = xm.xla_device() if self.gpu_ids else torch.device('cpu')")
    r.insert_after(NETWORKS, "import torch", [XM])
    r.delete(NETWORKS, INIT_ASSERT)
    r.replace(NETWORKS, INIT_TO, "net.to(xm.xla_device())")
    r.replace(NETWORKS, INIT_DP, "pass  # one XLA device: no DataParallel wrapper")


def save_on_host(r):
    r.replace(BASE, SAVE_IF, "if len(self.gpu_ids) > 0:")
    r.replace(BASE, SAVE_GPU, "xm.save(net.state_dict(), save_path)  # CPU copies; the network stays on XLA")
    r.delete(BASE, SAVE_BACK)


def sync_per_iteration(r):
    r.insert_after(TRAIN, "import time", [XM])
    r.insert_after(TRAIN, STEP, ["xm.mark_step()  # one graph per iteration: G, E, D and D2 updates"])


def apply(r):
    to_xla(r)
    save_on_host(r)
    sync_per_iteration(r)
