"""Goal metric for Spijkervet/SimCLR: the NT-Xent loss of the trained model on held-out stand-in
CIFAR-10 images (lower is better), the contrastive objective itself on images it never saw.

Builds SimCLR (ResNet-18 encoder, projection size read from the checkpoint) from the pristine
project, loads the trained state_dict, and draws two views of each of 256 held-out images
(task_kit.class_images with a seed the training files do not use) with the project's own
TransformsSimCLR at 32x32, under a fixed torch seed, so every checkpoint sees the same pairs. The
loss is the project's NT_Xent (temperature 0.5) over batches of 32 pairs, as in training, with
BatchNorm on batch statistics as in training: after 20 steps the running statistics are still
about 12% their initial values. Measured: 4.10 untrained; 3.84 / 3.93 / 3.88 after the task's
20 steps on the CPU reference (seeds 42, 1, 2).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the kit (run with -I)
from task_kit import Checkpoint, class_images, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED, BATCH, TEMPERATURE, SIZE = 256, 777, 32, 0.5, 32


def measure(ckpt: Checkpoint) -> float:
    import torch
    from PIL import Image
    from simclr import SimCLR  # the pristine, verified tree
    from simclr.modules import NT_Xent, get_resnet
    from simclr.modules.transformations import TransformsSimCLR

    state = ckpt.state()
    encoder = get_resnet("resnet18", pretrained=False)
    model = SimCLR(encoder, state["projector.2.weight"].shape[0], encoder.fc.in_features)
    model.load_state_dict(state)
    model.train()  # batch statistics, as the training loss saw them

    data, _ = class_images(N_HELD_OUT, HELD_OUT_SEED)
    augment = TransformsSimCLR(size=SIZE)
    torch.manual_seed(0)
    pairs = [augment(Image.fromarray(img.transpose(1, 2, 0))) for img in data]
    x_i = torch.stack([a for a, _ in pairs])
    x_j = torch.stack([b for _, b in pairs])
    criterion = NT_Xent(BATCH, TEMPERATURE, 1)
    losses = []
    with torch.no_grad():
        for k in range(0, N_HELD_OUT, BATCH):
            _, _, z_i, z_j = model(x_i[k:k + BATCH], x_j[k:k + BATCH])
            losses.append(float(criterion(z_i, z_j)))
    return sum(losses) / len(losses)


if __name__ == "__main__":
    evaluate_goal("heldout_nt_xent", measure)
