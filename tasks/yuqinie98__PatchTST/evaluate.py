"""Goal metric for yuqinie98/PatchTST: test-split MSE of the trained PatchTST on the stand-in Weather
series (normalised, as the project's own test reports it).

Builds the model and the test split with the pristine project (PatchTST_supervised's Model and
Dataset_Custom with the sizes of task.yaml's command), loads the trained state_dict, predicts every
test window (batches of 32, in order, eval mode) and returns the mean squared error.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, evaluate_goal  # noqa: E402

SEQ, PRED, CHANNELS = 96, 24, 21  # task.yaml's command
CONFIG = dict(enc_in=CHANNELS, seq_len=SEQ, pred_len=PRED, e_layers=2, n_heads=4, d_model=32, d_ff=64,
              dropout=0.2, fc_dropout=0.2, head_dropout=0.0, individual=0, patch_len=16, stride=8,
              padding_patch="end", revin=1, affine=0, subtract_last=0, decomposition=0, kernel_size=25)


def measure(ckpt: Checkpoint) -> float:
    import torch

    assert ckpt.project is not None
    code = ckpt.project / "PatchTST_supervised"
    sys.path.insert(0, str(code))
    from data_provider.data_loader import Dataset_Custom  # the pristine, verified tree
    from models.PatchTST import Model

    test = Dataset_Custom(root_path=str(code / "dataset"), data_path="weather.csv", flag="test",
                          size=[SEQ, 48, PRED], features="M", target="OT", timeenc=1, freq="h")
    model = Model(Namespace(**CONFIG)).float()
    model.load_state_dict({k: v.float() for k, v in ckpt.state().items()})
    model.eval()
    loader = torch.utils.data.DataLoader(test, batch_size=32, shuffle=False, drop_last=False)
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y, _, _ in loader:
            pred = model(x.float())[:, -PRED:, :]
            total += float(((pred - y[:, -PRED:, :].float()) ** 2).sum())
            count += pred.numel()
    return total / count


if __name__ == "__main__":
    evaluate_goal("mse", measure)
