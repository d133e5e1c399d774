"""Goal metric for tim-learn/SHOT (digit experiment, u2m): target-domain test accuracy after adaptation.

The checkpoint is the launcher's zip of the three state_dicts uda_digit.py saves after the target
stage (F.pt: LeNetBase, B.pt: feat_bottleneck, C.pt: the weight-normalised feat_classifier).
The networks are built with the pristine project's own network.py (--project), with the command's
configuration (--classifier bn, --layer wn, --bottleneck 256, 10 classes), loaded on the CPU and
run in evaluation mode (BatchNorm running statistics, no dropout) over the stand-in MNIST test
split prepare.py wrote (256 images), normalised as the project's loader does (ToTensor, then
Normalize(0.5, 0.5)).
Usage: python evaluate.py --checkpoint FILE --project ROOT --out FILE
"""

from __future__ import annotations

import sys
import tempfile
import zipfile
from pathlib import Path

import task_kit
import torch


def load_parts(checkpoint: Path) -> dict[str, dict[str, torch.Tensor]]:
    """The zip's F.pt, B.pt and C.pt, each loaded by the kit (weights_only, wrapper prefixes off)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with zipfile.ZipFile(checkpoint) as bundle:
                paths = {p: bundle.extract(f"{p}.pt", tmp) for p in "FBC"}
        except (zipfile.BadZipFile, KeyError) as err:
            raise task_kit.GoalUnavailable(f"no target-stage state_dicts in the checkpoint: {err}") from err
        return {p: task_kit.load_state(path, as_float=True) for p, path in paths.items()}


def measure(ckpt: task_kit.Checkpoint) -> float:
    sys.path.insert(0, str(ckpt.project / "digit"))
    import network

    parts = load_parts(ckpt.path)
    net_f = network.LeNetBase()
    net_b = network.feat_bottleneck(type="bn", feature_dim=net_f.in_features, bottleneck_dim=256)
    net_c = network.feat_classifier(type="wn", class_num=10, bottleneck_dim=256)
    for net, part in ((net_f, "F"), (net_b, "B"), (net_c, "C")):
        net.load_state_dict(parts[part])
        net.eval()
    data, targets = torch.load(ckpt.project / "digit" / "data" / "mnist" / "processed" / "test.pt",
                               weights_only=True)
    x = (data.float().unsqueeze(1) / 255.0 - 0.5) / 0.5
    with torch.no_grad():
        pred = net_c(net_b(net_f(x))).argmax(1)
    correct = int((pred == targets).sum())
    accuracy = correct / len(targets)
    print(f"target test accuracy {accuracy:.4f} ({correct}/{len(targets)})")
    return accuracy


if __name__ == "__main__":
    task_kit.evaluate_goal("accuracy", measure)
