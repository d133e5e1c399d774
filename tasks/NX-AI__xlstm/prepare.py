"""Configs and launcher for NX-AI/xlstm's formal-language experiment (experiments/main.py).

The project generates its parity data itself from its YAML config, so no data file is written.
This writes, harness-owned and protected:
- gpu2tpu_xlstm.yaml: the project's parity_xlstm01 experiment at the task's horizon (one sLSTM
  block, embedding 32, context 8, batch 32, 40 steps, 10 warm-up steps), still `device: cuda` with
  bf16 autocast and the sLSTM cell's default (CUDA kernel) backend, as the project ships it;
- gpu2tpu_xlstm_cpu.yaml: the same experiment on the CPU with the sLSTM cell's pure-PyTorch
  (`vanilla`) backend: the reference's own run (the task's reference_args pass it as a second
  --config, which argparse takes over the first);
- gpu2tpu_xlstm.py: runs a project script with the tree's root on sys.path (the project's README
  runs `PYTHONPATH=. python experiments/main.py`): python gpu2tpu_xlstm.py SCRIPT ARGS...
"""

from __future__ import annotations

import sys
from pathlib import Path

import task_kit
import yaml

LAUNCHER = "gpu2tpu_xlstm.py"
LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Puts the project's root on sys.path, as the project's README does with PYTHONPATH=., then runs the
project's script unchanged: python {launcher} SCRIPT ARGS...
"""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''
STEPS = 40


def config(device: str, backend: str | None) -> dict:
    slstm: dict = {"num_heads": 1}
    if backend:
        slstm["backend"] = backend
    return {
        "training": {"batch_size": 32, "lr": 0.001, "seed": 42, "val_every_step": 200,
                     "lr_warmup_steps": 10, "lr_decay_until_steps": "${.num_steps}",
                     "lr_decay_factor": 0.001, "weight_decay": 0.1, "num_steps": STEPS,
                     "device": device, "amp_precision": "bfloat16", "weight_precision": "float32",
                     "enable_mixed_precision": True},
        "model": {"num_blocks": 1, "embedding_dim": 32, "mlstm_block": {"mlstm": {"num_heads": 1}},
                  "slstm_block": {"slstm": slstm}, "slstm_at": [0],
                  "context_length": "${dataset.kwargs.context_length}",
                  "vocab_size": "${dataset.kwargs.vocab_size}"},
        "dataset": {"name": "form_language", "kwargs": {
            "synth_lang_type": "parity", "vocab_size": 3, "seed": 1, "enable_mask": True,
            "context_length": 8, "min_sequence_length": 3, "max_sequence_length": 6,
            "count": {"train": 32 * STEPS, "validation": 256, "test": 256},
            "subpar": {"validation": {"min_sequence_length": 4, "max_sequence_length": 8},
                       "test": {"min_sequence_length": 4, "max_sequence_length": 8}}}},
    }


def write(root: Path) -> None:
    if not (root / "experiments" / "main.py").is_file():
        sys.exit(f"prepare: {root} lacks experiments/main.py; materialise the task's tree first")
    head = "# Harness-owned (written by the task's prepare.py; do not edit).\n"
    (root / "gpu2tpu_xlstm.yaml").write_text(head + yaml.safe_dump(config("cuda", None), sort_keys=False))
    (root / "gpu2tpu_xlstm_cpu.yaml").write_text(
        head + yaml.safe_dump(config("cpu", "vanilla"), sort_keys=False))
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(launcher=LAUNCHER))


if __name__ == "__main__":
    task_kit.prepare_main(write, "NX-AI/xlstm")
