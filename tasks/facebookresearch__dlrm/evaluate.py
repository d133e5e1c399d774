"""Goal metric for facebookresearch__dlrm: held-out BCE of the trained DLRM on random data.

Builds DLRM_Net from the pristine tree at --project with the task's architecture (4 tables of
1000 rows, 16-wide embeddings, bottom MLP 13-64-16, top MLP 26-64-1, sigmoid output), loads the
trained state_dict, and scores 10 batches of 128 drawn by the project's own RandomDataset with a
seed the training never uses (4 fixed lookups per bag, as in the task's command).
"""

from __future__ import annotations

import os

import numpy as np
import task_kit
import torch

EVAL_SEED, BATCHES, BATCH, LOOKUPS = 9_999, 10, 128, 4
LN_EMB = np.array([1000, 1000, 1000, 1000])
LN_BOT = np.array([13, 64, 16])
LN_TOP = np.array([26, 64, 1])  # 26 = 5 * 4 / 2 pairwise interactions + 16 dense outputs


def measure(ckpt: task_kit.Checkpoint) -> float:
    os.chdir(ckpt.project)
    import dlrm_data_pytorch as dp  # the pristine, verified tree
    import dlrm_s_pytorch as dlrm_mod

    model = dlrm_mod.DLRM_Net(16, LN_EMB, LN_BOT, LN_TOP, arch_interaction_op="dot",
                              arch_interaction_itself=False, sigmoid_bot=-1,
                              sigmoid_top=LN_TOP.size - 2, ndevices=-1, loss_function="bce")
    model.load_state_dict(ckpt.state())
    model.eval()
    data = dp.RandomDataset(LN_BOT[0], LN_EMB, 1, BATCHES, BATCH, LOOKUPS, True, 1, False,
                            "random", "", False, reset_seed_on_access=True,
                            rand_data_dist="uniform", rand_data_min=0, rand_data_max=1,
                            rand_seed=EVAL_SEED)
    total = 0.0
    with torch.no_grad():
        for i in range(BATCHES):
            x, offsets, indices, target = dp.collate_wrapper_random_offset([data[i]])
            z = model(x, offsets, indices)
            total += float(torch.nn.functional.binary_cross_entropy(z, target))
    return total / BATCHES


if __name__ == "__main__":
    task_kit.evaluate_goal("test_bce", measure)
