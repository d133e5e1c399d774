"""Goal metric for fxia22/pointnet.pytorch: classification accuracy of the trained PointNet on 128
held-out stand-in clouds (heldout.txt, written by prepare.py, never read by training), higher is
better.

Builds PointNetCls (40 ModelNet classes, with the feature transform, as the command trains it) from
the pristine project, loads the trained state_dict and reads the held-out split with the project's
own ModelNetDataset (256 points a cloud, no augmentation; numpy seeded so every checkpoint sees the
same points). After the task's 16 steps BatchNorm's running statistics are still far from the
data's (eval-mode accuracy is near chance), so the forward pass uses batch statistics as training
did (BatchNorm in train mode, dropout off), in batches of 32.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the kit (run with -I)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

NUM_POINTS, BATCH = 256, 32


def measure(ckpt: Checkpoint) -> float:
    import numpy as np
    import torch
    from pointnet.dataset import ModelNetDataset  # the pristine, verified tree
    from pointnet.model import PointNetCls

    state = ckpt.state()
    if "fc3.weight" not in state:
        raise GoalUnavailable("the checkpoint holds no PointNetCls head (fc3.weight)")
    model = PointNetCls(k=state["fc3.weight"].shape[0], feature_transform=True)
    model.load_state_dict(state)
    model.train()
    model.dropout.eval()

    np.random.seed(0)
    data = ModelNetDataset(root=str(ckpt.project / "data" / "modelnet_standin"), npoints=NUM_POINTS,
                           split="heldout", data_augmentation=False)
    items = [data[i] for i in range(len(data))]
    points = torch.stack([p for p, _ in items]).transpose(2, 1)
    target = torch.cat([c for _, c in items])
    correct = 0
    with torch.no_grad():
        for k in range(0, len(items), BATCH):
            pred, _, _ = model(points[k:k + BATCH])
            correct += int((pred.argmax(1) == target[k:k + BATCH]).sum())
    return correct / len(items)


if __name__ == "__main__":
    evaluate_goal("heldout_accuracy", measure)
