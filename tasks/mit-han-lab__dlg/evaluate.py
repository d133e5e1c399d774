"""Harness-owned goal metric for mit-han-lab/dlg: how well the attack leaked the training image.

Reads the pristine stand-in CIFAR-100 training image the task's command leaks (--index 4, as the
project's ToTensor gives it, in [0, 1]) and its label from --project's data/.torch, and the
optimised dummy data and label from --checkpoint (written by the harness-owned launcher after the
task's LBFGS steps). The value is the mean squared error between the dummy image and the true one;
an attack that no longer leaks the label (the dummy label's largest entry is another class) has no
value, and says so.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import task_kit
import torch

INDEX = 4  # task.yaml's command


def measure(ckpt: task_kit.Checkpoint) -> float:
    with open(os.path.join(ckpt.project, "data", ".torch", "cifar-100-python", "train"), "rb") as f:
        train = pickle.load(f, encoding="latin1")
    image = np.asarray(train["data"][INDEX], dtype=np.float32).reshape(3, 32, 32) / 255.0
    label = int(train["fine_labels"][INDEX])
    result = ckpt.state()
    dummy = result["dummy_data"].float().reshape(3, 32, 32)
    leaked = int(result["dummy_label"].float().reshape(-1).argmax())
    mse = float(((dummy - torch.from_numpy(image)) ** 2).mean())
    print(f"reconstruction_mse {mse:.6f}; leaked label {leaked} (true {label})")
    if leaked != label:
        raise task_kit.GoalUnavailable(
            f"the attack did not leak the label: dummy label class {leaked}, true class {label}")
    return mse


if __name__ == "__main__":
    task_kit.evaluate_goal("reconstruction_mse", measure)
