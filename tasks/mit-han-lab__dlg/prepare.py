"""Stand-in CIFAR-100 for mit-han-lab/dlg, plus the launcher that runs its attack for a set number
of LBFGS steps.

The project reads one CIFAR-100 training image (`--index`) with torchvision's CIFAR100 from
`~/.torch`. This writes data/.torch/cifar-100-python/ in the format torchvision reads (python
pickles: `train` and `test` with `data`, uint8 (N, 3072) in channel-major order, `fine_labels`,
`coarse_labels`, `filenames`, `batch_label`; `meta` with `fine_label_names` and
`coarse_label_names`): 32 training and 8 test images, each a smooth colour gradient with a
bright disc at an image-dependent place and pixel noise. Deterministic.

The launcher gpu2tpu_dlg.py (harness-owned, protected) points HOME at data/ (so `~/.torch` is the
stand-in), sets torchvision's expected md5s to those of the stand-in files (the integrity check
still runs, against them), selects matplotlib's non-interactive backend, and runs the project's
script unchanged, stopping it after the number of LBFGS steps given by its own --steps (the
project hard-codes 300): at that point it writes the optimised dummy data and label to
gpu2tpu_dlg_result.pt, the task's checkpoint. Usage: python gpu2tpu_dlg.py --steps N SCRIPT ARGS...
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import task_kit

SIDE, N_TRAIN, N_TEST, FINE, COARSE = 32, 32, 8, 100, 20
BASE = Path("data") / ".torch" / "cifar-100-python"
LAUNCHER = "gpu2tpu_dlg.py"
LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

python {launcher} --steps N SCRIPT ARGS...: `~/.torch` is the stand-in CIFAR-100 under data/ (its
md5s are the ones torchvision checks), matplotlib draws off screen, and the script runs unchanged
until its N-th LBFGS step; then the optimised tensors are written to gpu2tpu_dlg_result.pt.
"""
import os
import runpy
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
os.environ["HOME"] = os.path.join(ROOT, "data")
os.environ["MPLBACKEND"] = "Agg"

import torch  # noqa: E402
import torchvision.datasets as datasets  # noqa: E402

MD5 = {md5!r}
cifar = datasets.CIFAR100
cifar.train_list = [[name, MD5[name]] for name, _ in cifar.train_list]
cifar.test_list = [[name, MD5[name]] for name, _ in cifar.test_list]
cifar.meta = {{**cifar.meta, "md5": MD5[cifar.meta["filename"]]}}

if len(sys.argv) < 4 or sys.argv[1] != "--steps":
    sys.exit("usage: python {launcher} --steps N SCRIPT ARGS...")
STEPS = int(sys.argv[2])
RESULT = os.path.join(ROOT, "gpu2tpu_dlg_result.pt")
taken = [0]


def counted(hooked_step):
    """LBFGS.step as torch wraps it with the optimizer hooks, then the stop: every step's hooks
    (the harness's probe among them) have run before the script ends."""
    def step(self, *args, **kwargs):
        loss = hooked_step(self, *args, **kwargs)
        taken[0] += 1
        if taken[0] >= STEPS:
            dummy_data, dummy_label = (p.detach().cpu() for p in self.param_groups[0]["params"])
            torch.save({{"dummy_data": dummy_data, "dummy_label": dummy_label, "steps": taken[0]}}, RESULT)
            print(f"gpu2tpu: stopped after {{taken[0]}} LBFGS steps; wrote {{RESULT}}", flush=True)
            sys.exit(0)
        return loss
    step.hooked = True  # torch does not wrap it again
    step.gpu2tpu_counted = True
    return step


lbfgs_init = torch.optim.LBFGS.__init__


def init(self, *args, **kwargs):
    lbfgs_init(self, *args, **kwargs)  # torch wraps LBFGS.step with its hooks here, once
    if not getattr(torch.optim.LBFGS.step, "gpu2tpu_counted", False):
        torch.optim.LBFGS.step = counted(torch.optim.LBFGS.step)


torch.optim.LBFGS.__init__ = init
sys.argv = sys.argv[3:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def images(n: int, seed: int) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE] / (SIDE - 1)
    out = np.empty((n, 3, SIDE, SIDE))
    for k in range(n):
        c0, c1 = rng.uniform(30, 225, size=(2, 3))
        img = c0[:, None, None] * (1 - xx) + c1[:, None, None] * xx
        cy, cx, r = rng.uniform(8, 24), rng.uniform(8, 24), rng.uniform(4, 9)
        img = img + 50.0 * (((yy * (SIDE - 1) - cy) ** 2 + (xx * (SIDE - 1) - cx) ** 2) < r * r)
        out[k] = img + 0.5 * (yy - 0.5) * 40 + rng.normal(0.0, 8.0, size=(3, SIDE, SIDE))
    data = np.clip(np.rint(out), 0, 255).astype(np.uint8).reshape(n, 3 * SIDE * SIDE)
    return data, [int(c) for c in rng.integers(0, FINE, size=n)]


def split(name: str, n: int, seed: int) -> dict:
    data, fine = images(n, seed)
    return {"filenames": [f"standin_{seed}_{i:05d}.png" for i in range(n)], "batch_label": name,
            "fine_labels": fine, "coarse_labels": [c // 5 for c in fine], "data": data}


def write(root: Path) -> None:
    if not (root / "main.py").is_file():
        sys.exit(f"prepare: {root} lacks main.py; materialise the task's tree first")
    files = {"train": split("training batch 1 of 1", N_TRAIN, 100),
             "test": split("testing batch 1 of 1", N_TEST, 0),
             "meta": {"fine_label_names": [f"class_{i:02d}" for i in range(FINE)],
                      "coarse_label_names": [f"group_{i:02d}" for i in range(COARSE)]}}
    md5 = task_kit.write_pickles(root / BASE, files)
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(launcher=LAUNCHER, md5=md5))


if __name__ == "__main__":
    task_kit.prepare_main(write, "mit-han-lab/dlg")
