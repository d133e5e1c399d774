"""Harness-owned goal metric for zhouhaoyi/Informer2020: test-split MSE of the trained Informer on
the stand-in series (normalised, as the project's own test reports it).

Builds the model and the test split with the pristine project at --project (Informer and
Dataset_Custom with the sizes of task.yaml's command), loads the trained state_dict from
--checkpoint, predicts every test window (batches of 16, in order, dropout off) and writes the
mean squared error to --out.
"""

from __future__ import annotations

import os

import task_kit
import torch

SEQ, LABEL, PRED, D_MODEL, HEADS, E_LAYERS, D_LAYERS, D_FF = 48, 24, 12, 32, 2, 1, 1, 64  # task.yaml


def measure(ckpt: task_kit.Checkpoint) -> float:
    from data.data_loader import Dataset_Custom  # the pristine, verified tree
    from models.model import Informer

    test = Dataset_Custom(root_path=os.path.join(ckpt.project, "data", "standin"), data_path="standin.csv",
                          flag="test", size=[SEQ, LABEL, PRED], features="M", target="OT", timeenc=1,
                          freq="h")
    model = Informer(7, 7, 7, SEQ, LABEL, PRED, 5, D_MODEL, HEADS, E_LAYERS, D_LAYERS, D_FF, 0.05, "prob",
                     "timeF", "h", "gelu", False, True, True, torch.device("cpu"))
    model.load_state_dict(ckpt.state(as_float=True))
    model.eval()
    torch.manual_seed(0)  # ProbSparse attention samples keys: the same sample for every model graded
    loader = torch.utils.data.DataLoader(test, batch_size=16, shuffle=False, drop_last=False)
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y, x_mark, y_mark in loader:
            x, y, x_mark, y_mark = x.float(), y.float(), x_mark.float(), y_mark.float()
            dec = torch.cat([y[:, :LABEL, :], torch.zeros(y.shape[0], PRED, y.shape[-1])], dim=1)
            pred = model(x, x_mark, dec, y_mark)
            total += float(((pred - y[:, -PRED:, :]) ** 2).sum())
            count += pred.numel()
    mse = total / count
    print(f"mse {mse:.5f}")
    return mse


if __name__ == "__main__":
    task_kit.evaluate_goal("mse", measure)
