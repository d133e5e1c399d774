"""Goal metric for junyanz/BicycleGAN: the trained generator's L1 reconstruction error on the 16
held-out stand-in pairs (datasets/gpu2tpu_shapes/val; lower is better).

Builds the project's generator on the CPU as train.py does for the task's command
(networks.define_G: unet_128 with z added at the input, 8 filters, instance norm, dropout), loads
the trained weights (the probe saves netG: it owns the parameters of the first optimizer built),
and reads the held-out pairs with the project's own AlignedDataset and transforms (128 pixels,
no flip, A as one grey channel). The generator runs in eval mode (no dropout) with z = 0, the
mean of the prior the encoder is pulled towards; the value is the mean |G(A, 0) - B| over the
pixels in the [-1, 1] scale of the images, the project's own |B - G(A, z)| without its weight
lambda_L1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

DATA = Path("datasets") / "gpu2tpu_shapes"
NZ, NGF, SIDE = 8, 8, 128


def measure(ckpt: Checkpoint) -> float:
    import torch
    from data.aligned_dataset import AlignedDataset  # the pristine, prepared tree
    from models import networks

    net = networks.define_G(1, 3, NZ, NGF, netG="unet_128", norm="instance", nl="relu",
                            use_dropout=True, init_type="xavier", init_gain=0.02, gpu_ids=[],
                            where_add="input", upsample="basic")
    try:
        net.load_state_dict(ckpt.state(as_float=True))
    except RuntimeError as exc:
        raise GoalUnavailable(f"the checkpoint does not load into the generator: {exc}") from exc
    opt = SimpleNamespace(dataroot=str(ckpt.project / DATA), phase="val", max_dataset_size=float("inf"),
                          load_size=SIDE, crop_size=SIDE, preprocess="resize_and_crop", no_flip=True,
                          direction="AtoB", input_nc=1, output_nc=3)
    data = AlignedDataset(opt)
    a = torch.stack([data[i]["A"] for i in range(len(data))])
    b = torch.stack([data[i]["B"] for i in range(len(data))])
    with torch.no_grad():
        fake = net.eval()(a, torch.zeros(len(a), NZ))
    loss = float((fake - b).abs().mean())
    print(f"held-out L1 {loss:.5f} over {len(a)} pairs")
    return loss


if __name__ == "__main__":
    evaluate_goal("l1_reconstruction", measure)
