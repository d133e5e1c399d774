"""Gold migration of yaodongyu/TRADES (train_trades_cifar10.py, trades.py) to PyTorch/XLA.

The device is the XLA device (the script's CUDA switch cannot pick it). trades.py draws the PGD
start noise on the batch's device instead of on the host followed by `.cuda()` (both branches,
l_inf and l_2). The PGD inner maximisation stays as written: its ten autograd.grad steps and the
robust loss are traced lazily into the step's graph, and one torch_xla.sync() after
optimizer.step() cuts it, so a single graph is compiled and reused by every step. The log line
keeps its loss.item() (every --log-interval batches, as upstream); checkpoints are written with
xm.save (CPU copies, loadable without torch_xla).
"""

TRAIN = "train_trades_cifar10.py"
TRADES = "trades.py"


def xla_device(r, device="torch_xla.device()"):
    """The script's device is the XLA device; checkpoints saved as CPU copies."""
    r.insert_after(TRAIN, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.replace(TRAIN, 'device = torch.device("cuda" if use_cuda else "cpu")', f"device = {device}")
    r.replace(TRAIN, "torch.save(model.state_dict(),", "xm.save(model.state_dict(),")
    r.replace(TRAIN, "torch.save(optimizer.state_dict(),", "xm.save(optimizer.state_dict(),")


def noise_on_device(r):
    """trades.py: the PGD start noise drawn where the batch is, not on the host then `.cuda()`."""
    r.replace(TRADES, "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()",
              "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape, device=x_natural.device)")
    r.replace(TRADES, "delta = 0.001 * torch.randn(x_natural.shape).cuda().detach()",
              "delta = 0.001 * torch.randn(x_natural.shape, device=x_natural.device)")


EVAL_BN = [
    "",
    "# torch_xla cannot differentiate batch norm in eval mode (pytorch/xla#3361: its",
    "# native_batch_norm_backward rejects the empty batch statistics eval mode saves), and the PGD",
    "# loop takes input gradients through the model in eval mode: there F.batch_norm becomes the",
    "# same normalisation by the running statistics, written out.",
    "_batch_norm = F.batch_norm",
    "",
    "",
    "def _eval_batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,",
    "                     momentum=0.1, eps=1e-5):",
    "    if training or running_mean is None:",
    "        return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)",
    "    shape = [1, -1] + [1] * (input.dim() - 2)",
    "    out = (input - running_mean.view(shape)) * torch.rsqrt(running_var.view(shape) + eps)",
    "    if weight is not None:",
    "        out = out * weight.view(shape)",
    "    return out if bias is None else out + bias.view(shape)",
]


def eval_bn_differentiable(r):
    """trades.py: batch norm in eval mode written out for the PGD loop (XLA cannot differentiate
    its own), restored before the training-mode forward passes."""
    r.insert_after(TRADES, "import torch.optim as optim", EVAL_BN)
    r.replace(TRADES, "model.eval()", ["model.eval()", "F.batch_norm = _eval_batch_norm"])
    r.replace(TRADES, "model.train()", ["F.batch_norm = _batch_norm", "model.train()"])


def sync_per_step(r):
    """One graph per optimizer step: the PGD loop, the TRADES loss, backward and the update."""
    r.insert_after(TRAIN, "optimizer.step()", ["torch_xla.sync()"])


def apply(r):
    xla_device(r)
    noise_on_device(r)
    eval_bn_differentiable(r)
    sync_per_step(r)
