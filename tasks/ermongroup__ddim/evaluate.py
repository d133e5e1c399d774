"""Goal metric for ermongroup/ddim: the noise-prediction loss of the trained model on held-out
stand-in images (lower is better).

Builds the project's Model from the stand-in config (configs/gpu2tpu_tiny.yml in the prepared
tree), loads the trained weights (the probe's state_dict; DataParallel's `module.` stripped) and
computes the project's own training loss (functions/losses.py: the squared error of the predicted
noise, summed per image) in eval mode on 256 held-out images (prepare.py's generator with a seed
the training files do not use), transformed as the project's test transform does (resize to the
config's image size, [0, 1], rescaled to [-1, 1]), twice each, with timesteps and noise drawn from
a fixed generator: every checkpoint is measured on the same noisy inputs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, class_images, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED, DRAWS = 256, 777, 2


def namespace(d: dict) -> argparse.Namespace:
    return argparse.Namespace(**{k: namespace(v) if isinstance(v, dict) else v for k, v in d.items()})


def measure(ckpt: Checkpoint) -> float:
    import numpy as np
    import torch
    import torchvision.transforms as transforms
    import yaml
    from functions.losses import loss_registry  # the pristine, prepared tree
    from models.diffusion import Model
    from PIL import Image
    from runners.diffusion import get_beta_schedule

    assert ckpt.project is not None
    config = namespace(yaml.safe_load((ckpt.project / "configs" / "gpu2tpu_tiny.yml").read_text()))
    model = Model(config)
    model.load_state_dict(ckpt.state())
    model.eval()
    betas = torch.from_numpy(get_beta_schedule(
        config.diffusion.beta_schedule, beta_start=config.diffusion.beta_start,
        beta_end=config.diffusion.beta_end,
        num_diffusion_timesteps=config.diffusion.num_diffusion_timesteps)).float()

    data, _ = class_images(N_HELD_OUT, HELD_OUT_SEED)
    test_transform = transforms.Compose([transforms.Resize(config.data.image_size), transforms.ToTensor()])
    x0 = torch.stack([test_transform(Image.fromarray(np.ascontiguousarray(img.transpose(1, 2, 0))))
                      for img in data])
    x0 = 2 * x0 - 1.0  # data_transform with rescaled: true
    gen = torch.Generator().manual_seed(0)
    losses = []
    with torch.no_grad():
        for _ in range(DRAWS):
            for chunk in torch.split(x0, 64):
                t = torch.randint(0, betas.numel(), (chunk.size(0),), generator=gen)
                e = torch.randn(chunk.shape, generator=gen)
                loss = loss_registry[config.model.type](model, chunk, t, e, betas, keepdim=True)
                losses.append(loss)
    return float(torch.cat(losses).mean())


if __name__ == "__main__":
    evaluate_goal("eps_loss", measure)
