"""Goal metric for microsoft/Swin-Transformer: top-1 accuracy of the trained Swin on 500 held-out
stand-in images (the ten classes prepare.py writes, a seed its files do not use).

Builds the project's SwinTransformer (models/swin_transformer.py of the pristine tree) with the
task command's --opts on top of config.py's defaults (32x32 images, patch 4, embed dim 32, one stage
of depth 2 with 2 heads, window 4, the 1000-way head data/build.py fixes for ImageNet), loads the
trained state_dict (DistributedDataParallel's `module.` prefix removed by the kit) and scores the
images as main.py's validation transform feeds them at 32x32 (ToTensor, then timm's ImageNet mean
and std), argmax over all 1000 logits as timm's accuracy() does. Folder n0000000c holds class c,
so ImageFolder's label is the class index.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the kit (run with -I)
from task_kit import Checkpoint, GoalUnavailable, class_images, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED, N_CLASSES = 500, 777, 10
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # timm's IMAGENET_DEFAULT_MEAN / _STD


def measure(ckpt: Checkpoint) -> float:
    import numpy as np
    import torch
    from models.swin_transformer import SwinTransformer  # the pristine, verified tree

    state = ckpt.state()
    if "head.weight" not in state:
        raise GoalUnavailable("no Swin classifier head (head.weight) in the checkpoint")
    model = SwinTransformer(img_size=32, patch_size=4, in_chans=3, num_classes=1000, embed_dim=32,
                            depths=[2], num_heads=[2], window_size=4, mlp_ratio=4.0, qkv_bias=True,
                            drop_path_rate=0.2, ape=False, patch_norm=True)
    model.load_state_dict(state)
    data, labels = class_images(N_HELD_OUT, HELD_OUT_SEED, classes=N_CLASSES)
    x = torch.from_numpy(data.astype(np.float32) / 255.0)
    x = (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    with torch.no_grad():
        pred = torch.cat([model.eval()(chunk) for chunk in torch.split(x, 100)]).argmax(dim=1)
    return float((pred == torch.tensor(labels)).float().mean())


if __name__ == "__main__":
    evaluate_goal("accuracy", measure)
