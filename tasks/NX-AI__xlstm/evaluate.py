"""Harness-owned goal metric for NX-AI/xlstm (parity, formal-language experiment): the masked
cross-entropy of the trained xLSTM language model on the experiment's test split.

Builds the model and the data with the pristine project at --project, from the task's CPU config
(gpu2tpu_xlstm_cpu.yaml: the same model and data as the graded run, the sLSTM cell's pure-PyTorch
backend), loads the trained state_dict from --checkpoint and scores every test sequence in float32
without autocast (positions the project masks out, target -1, are ignored as in its training loss).
"""

from __future__ import annotations

import os

import task_kit
import torch


def measure(ckpt: task_kit.Checkpoint) -> float:
    from dacite import from_dict
    from experiments.main import load_dataset  # the pristine, verified tree
    from omegaconf import OmegaConf
    from xlstm.xlstm_lm_model import xLSTMLMModel, xLSTMLMModelConfig

    cfg = OmegaConf.load(os.path.join(ckpt.project, "gpu2tpu_xlstm_cpu.yaml"))
    OmegaConf.resolve(cfg)
    dataset = load_dataset(cfg.dataset.name, cfg.dataset.kwargs)
    model_cfg = OmegaConf.to_container(cfg.model)
    assert isinstance(model_cfg, dict)
    model = xLSTMLMModel(from_dict(xLSTMLMModelConfig, model_cfg))
    model.load_state_dict(ckpt.state(as_float=True))
    model.eval()
    total, count = 0.0, 0
    loader = torch.utils.data.DataLoader(dataset.test_split["test"], batch_size=64)
    with torch.no_grad():
        for inputs, labels in loader:
            logits = model(inputs)
            loss = torch.nn.functional.cross_entropy(logits.view(-1, cfg.model.vocab_size), labels.view(-1),
                                                     ignore_index=-1, reduction="sum")
            total += loss.item()
            count += int((labels != -1).sum())
    value = total / count
    print(f"test_ce {value:.6f}")
    return value


if __name__ == "__main__":
    task_kit.evaluate_goal("test_ce", measure)
