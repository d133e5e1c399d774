"""Gold migration of tim-learn/SHOT's digit experiment (digit/uda_digit.py --dset u2m) to PyTorch/XLA.

- One device, the XLA device, chosen once at import (DEVICE): every `.cuda()` on the networks
  (the source stage's, test_target's and the target stage's netF, netB, netC) and on the batches
  (training, cal_acc, obtain_label) becomes `.to(DEVICE)`. Each optimizer step, in the source
  stage and in the target stage, ends with torch_xla.sync(): one graph per step.
- CrossEntropyLabelSmooth (loss.py) builds its one-hot targets on the host from
  `targets.unsqueeze(1).cpu()` and copies them back: a read of the labels in every source step.
  The one-hot is built on the logits' device instead (zeros_like + scatter_), same values.
- The target stage's pseudo-labels (obtain_label's clustering: numpy and scipy's cdist over the
  whole target set, once per epoch, part of the algorithm) stay on the host, where they are
  computed; each step takes its batch's labels there (by the loader's indices) and moves them
  to the device with the batch, instead of moving the whole array to the device and indexing it
  with a host index tensor.
- netC is weight-normalised (--layer wn, the default): nn.utils.weight_norm recomputes the weight
  with the fused aten::_weight_norm_interface, which torch_xla runs on the CPU (with its
  transfers) in every forward and backward. xla_weight_norm.py (imported first) gives the
  weight_norm module a `_weight_norm` of composite ops (v * g / ||v|| over all dims but dim): the
  same parameters (weight_g, weight_v), names and values, so the saved state_dicts load into
  the original networks.
- torch.cuda.manual_seed(SEED) becomes xm.set_rng_state(SEED): the XLA generator (dropout masks)
  is seeded by --seed as CUDA's was; torch, numpy and random keep their seeding.

The evaluations (cal_acc, obtain_label) keep their per-batch `.cpu()`: they read their outputs
once per evaluation, as any evaluation must; they are not in the training step.
"""

UDA, LOSS = "digit/uda_digit.py", "digit/loss.py"
WN_MODULE = "digit/xla_weight_norm.py"
STEP = "optimizer.step()"
LABEL_READ = "targets = torch.zeros(log_probs.size()).scatter_(1, targets.unsqueeze(1).cpu(), 1)"
LABEL_COPY = "if self.use_gpu: targets = targets.cuda()"
SEED_LINE = "torch.cuda.manual_seed(SEED)"

XLA_WEIGHT_NORM = '''"""nn.utils.weight_norm without its fused kernel (aten::_weight_norm_interface),
which torch_xla runs on the CPU. The weight is recomputed from composite ops that lower to XLA,
by the formula of torch._weight_norm: v * (g / ||v||), the norm over every dim but `dim`.
Parameters, their names (weight_g, weight_v) and values are those of nn.utils.weight_norm: only
the computation changes.
"""
import sys

import torch.nn.utils  # noqa: F401  (loads torch.nn.utils.weight_norm, patched below)


def composite_weight_norm(v, g, dim=0):
    return v * (g / _norm_except(v, dim))


def _norm_except(v, dim):
    if dim == -1:
        return v.norm()
    dims = [d for d in range(v.dim()) if d != dim]
    return v.pow(2).sum(dim=dims, keepdim=True).sqrt()


sys.modules["torch.nn.utils.weight_norm"]._weight_norm = composite_weight_norm
'''

NET_LINES = {  # each network built three times (source stage, test_target, target stage)
    "netF = network.LeNetBase().cuda()": ("netF = network.LeNetBase().to(DEVICE)", 6),
    "netF = network.DTNBase().cuda()": ("netF = network.DTNBase().to(DEVICE)", 3),
    "netB = network.feat_bottleneck(type=args.classifier, feature_dim=netF.in_features, "
    "bottleneck_dim=args.bottleneck).cuda()":
        ("netB = network.feat_bottleneck(type=args.classifier, feature_dim=netF.in_features, "
         "bottleneck_dim=args.bottleneck).to(DEVICE)", 3),
    "netC = network.feat_classifier(type=args.layer, class_num = args.class_num, "
    "bottleneck_dim=args.bottleneck).cuda()":
        ("netC = network.feat_classifier(type=args.layer, class_num = args.class_num, "
         "bottleneck_dim=args.bottleneck).to(DEVICE)", 3),
}


def weight_norm_on_xla(r):
    r.write(WN_MODULE, XLA_WEIGHT_NORM)
    r.insert_after(UDA, "import network, loss", ["import xla_weight_norm  # noqa: F401"])


def to_xla(r, device="torch_xla.device()", barrier=True):
    """Networks, batches and the pseudo-labels of the step on `device`; a sync after each step."""
    r.insert_after(UDA, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    r.insert_after(UDA, "from data_load import mnist, svhn, usps", ["", f"DEVICE = {device}"])
    for old, (new, count) in NET_LINES.items():
        r.replace_each(UDA, old, new, count=count)
    r.replace_each(UDA, "inputs = inputs.cuda()", "inputs = inputs.to(DEVICE)", count=2)
    r.replace(UDA, "inputs_source, labels_source = inputs_source.cuda(), labels_source.cuda()",
              "inputs_source, labels_source = inputs_source.to(DEVICE), labels_source.to(DEVICE)")
    r.replace(UDA, "mem_label = torch.from_numpy(mem_label).cuda()",
              "mem_label = torch.from_numpy(mem_label)  # stays on the host, where it is computed")
    r.replace(UDA, "pred = mem_label[tar_idx]", "pred = mem_label[tar_idx].to(DEVICE)")
    r.replace(UDA, "inputs_test = inputs_test.cuda()", "inputs_test = inputs_test.to(DEVICE)")
    r.replace(UDA, "classifier_loss = torch.tensor(0.0).cuda()",
              "classifier_loss = torch.tensor(0.0, device=DEVICE)")
    r.replace(UDA, SEED_LINE, "xm.set_rng_state(SEED)")
    if barrier:
        r.replace_each(UDA, STEP, [STEP, "torch_xla.sync()"], count=2)


def labels_on_device(r):
    """CrossEntropyLabelSmooth's one-hot built on the logits' device: no read of the labels."""
    r.replace(LOSS, LABEL_READ, "targets = torch.zeros_like(log_probs).scatter_(1, targets.unsqueeze(1), 1)")
    r.delete(LOSS, LABEL_COPY)


def apply(r):
    weight_norm_on_xla(r)
    to_xla(r)
    labels_on_device(r)
