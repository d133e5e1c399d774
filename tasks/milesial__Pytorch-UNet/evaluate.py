"""Goal metric for milesial/Pytorch-UNet: the project's own validation Dice score.

The U-Net (3 channels, 2 classes, bilinear: the command's flags) is built from the pristine,
prepared project and loaded from the checkpoint train.py saved at the end of its epoch; the
score is the project's evaluate() (Dice of the argmax mask against the true one, background
left out, averaged over the batches) on the project's validation split: CarvanaDataset at
--scale 0.25, random_split with train.py's torch.Generator().manual_seed(0) at --validation 20
(8 of the 40 stand-in pairs), batches of 2 with drop_last, as train.py's val_loader. On the
CPU, in fp32 (autocast off), single process.

Before it, every BatchNorm's running statistics are recomputed (the kit's recalibrate_batchnorm)
over the 32 training images in train.py's batches of 2: after 16 steps the running averages
(momentum 0.1) are still far from the batch statistics the model trained with, most of all at
the 1 x 1 bottom of the U, and the saved ones make the eval-mode network predict background
everywhere (Dice ~0 for every reference seed, while the training loss fell from 1.1 to 0.2);
recalibrated, the same checkpoint scores 0.88.

Measured (validate, xla-cpu target): reference seeds 0, 1, 2 on the CPU -> 0.8769, 0.8861, 0.9417;
gold 0.8818.
"""

from __future__ import annotations

import importlib.util

from task_kit import Checkpoint, GoalUnavailable, evaluate_goal, recalibrate_batchnorm

SCALE, VAL_PERCENT, BATCH = 0.25, 0.2, 2


def measure(ckpt: Checkpoint) -> float:
    import torch
    from torch.utils.data import DataLoader, random_split
    from unet import UNet  # the pristine tree (--project) is on sys.path
    from utils.data_loading import CarvanaDataset

    # the project's evaluate.py (this script's own name shadows it on sys.path)
    spec = importlib.util.spec_from_file_location("unet_project_evaluate", ckpt.project / "evaluate.py")
    if spec is None or spec.loader is None:
        raise GoalUnavailable("the project's evaluate.py cannot be loaded")
    project_eval = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(project_eval)

    state = ckpt.state()
    state.pop("mask_values", None)
    model = UNet(n_channels=3, n_classes=2, bilinear=True)
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise GoalUnavailable(f"the checkpoint does not load into the UNet: {err}") from err

    data = ckpt.project / "data"
    dataset = CarvanaDataset(data / "imgs", data / "masks", SCALE)
    n_val = int(len(dataset) * VAL_PERCENT)
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val],
                                      generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        recalibrate_batchnorm(model, [b["image"] for b in DataLoader(train_set, batch_size=BATCH)])
    loader = DataLoader(val_set, batch_size=BATCH, shuffle=False, drop_last=True, num_workers=0)
    score = project_eval.evaluate(model, loader, torch.device("cpu"), False)
    return float(score)


if __name__ == "__main__":
    evaluate_goal("val_dice", measure)
