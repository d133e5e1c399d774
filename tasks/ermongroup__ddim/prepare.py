"""Stand-in CIFAR-10 and a tiny config for ermongroup/ddim, plus the launcher that accepts the data.

main.py reads `configs/<--config>`; configs/gpu2tpu_tiny.yml (harness-owned, protected) is the
project's cifar10.yml with a small U-Net (ch 32, one level: ch_mult [1], one res block, attention in
the middle block only) on 16x16 images, batches of 16, one epoch and no loader workers (each graph
of a larger U-Net compiles for tens of seconds on XLA:CPU); the diffusion schedule, the optimiser
(Adam, lr 2e-4, grad clip 1.0), dropout and the EMA are cifar10.yml's.

get_dataset() builds torchvision's CIFAR10 under <--exp>/datasets/cifar10 (train) and
<--exp>/datasets/cifar10_test (test), both with download=True: each checks every file's md5. The
same stand-in batches go to both folders: data_batch_1..5 with 32 images each (160 training
images, 10 steps of 16) and test_batch with 32, in CIFAR's python-pickle format (kit
`standin_cifar10`: `class_images` with a mean colour and a brighter square per class, with pixel
noise). The launcher gpu2tpu_cifar10.py sets torchvision's expected md5s to those of these
files, then runs main.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
import task_kit  # noqa: E402

EXP = Path("exp") / "datasets"
FOLDERS = ("cifar10", "cifar10_test")
TRAIN_FILES, PER_FILE, N_TEST = 5, 32, 32
CONFIG = Path("configs") / "gpu2tpu_tiny.yml"

CONFIG_TEXT = """\
# Harness-owned stand-in config (written by the task's prepare.py; do not edit): cifar10.yml with a
# small model, batches of 16 and one epoch over the stand-in data.
data:
    dataset: "CIFAR10"
    image_size: 16
    channels: 3
    logit_transform: false
    uniform_dequantization: false
    gaussian_dequantization: false
    random_flip: true
    rescaled: true
    num_workers: 0

model:
    type: "simple"
    in_channels: 3
    out_ch: 3
    ch: 32
    ch_mult: [1, ]
    num_res_blocks: 1
    attn_resolutions: []
    dropout: 0.1
    var_type: fixedlarge
    ema_rate: 0.9999
    ema: True
    resamp_with_conv: True

diffusion:
    beta_schedule: linear
    beta_start: 0.0001
    beta_end: 0.02
    num_diffusion_timesteps: 1000

training:
    batch_size: 16
    n_epochs: 1
    n_iters: 5000000
    snapshot_freq: 5000
    validation_freq: 2000

sampling:
    batch_size: 16
    last_only: True

optim:
    weight_decay: 0.000
    optimizer: "Adam"
    lr: 0.0002
    beta1: 0.9
    amsgrad: false
    eps: 0.00000001
    grad_clip: 1.0
"""


def write(root: Path) -> None:
    content = task_kit.standin_cifar10(TRAIN_FILES, PER_FILE, N_TEST)
    md5: dict[str, str] = {}
    for folder in FOLDERS:
        md5 = task_kit.write_pickles(root / EXP / folder / "cifar-10-batches-py", content)
    (root / CONFIG).write_text(CONFIG_TEXT)
    task_kit.torchvision_md5_launcher(root, "gpu2tpu_cifar10.py", md5)


if __name__ == "__main__":
    task_kit.prepare_main(write, "ermongroup/ddim")
