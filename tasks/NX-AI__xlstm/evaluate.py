"""Harness-owned goal metric for NX-AI/xlstm (parity, formal-language experiment): the masked
cross-entropy of the trained xLSTM language model on the experiment's test split.

Builds the model and the data with the pristine project at --project, from the task's CPU config
(gpu2tpu_xlstm_cpu.yaml: the same model and data as the graded run, the sLSTM cell's pure-PyTorch
backend), loads the trained state_dict from --checkpoint and scores every test sequence in float32
without autocast (positions the project masks out, target -1, are ignored as in its training loss).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.project))
    from dacite import from_dict
    from omegaconf import OmegaConf

    from experiments.main import load_dataset  # the pristine, verified tree
    from xlstm.xlstm_lm_model import xLSTMLMModel, xLSTMLMModelConfig

    cfg = OmegaConf.load(os.path.join(args.project, "gpu2tpu_xlstm_cpu.yaml"))
    OmegaConf.resolve(cfg)
    dataset = load_dataset(cfg.dataset.name, cfg.dataset.kwargs)
    model = xLSTMLMModel(from_dict(xLSTMLMModelConfig, OmegaConf.to_container(cfg.model)))
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    model.load_state_dict({k.removeprefix("module."): v.float() for k, v in state.items()})
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
    with open(args.out, "w") as f:
        json.dump({"schema_version": 1, "metric": "test_ce", "value": value}, f)
    print(f"test_ce {value:.6f}")


if __name__ == "__main__":
    main()
