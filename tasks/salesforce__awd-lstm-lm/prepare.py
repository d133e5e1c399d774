"""Stand-in Penn Treebank for salesforce/awd-lstm-lm, plus the launcher that runs it on torch 2.x.

Writes data/penn/{train,valid,test}.txt in the format data.Corpus reads (one sentence per line,
words separated by spaces; the loader appends <eos>): 1600 / 800 / 800 words over a vocabulary of
200, drawn from a fixed first-order chain (each word has three likely successors, otherwise a
Zipf-distributed word), so a few SGD steps lower the loss. Deterministic.

The project saves and reloads its whole model with torch.save / torch.load (model_save,
model_load) and caches the tokenised corpus the same way; since torch 2.6, torch.load refuses
pickled objects unless told otherwise. The launcher gpu2tpu_awd.py (harness-owned, protected) sets
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, torch's own switch for code written before that change, then
runs the project's script unchanged with its own arguments.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import task_kit

VOCAB, CHAIN_SEED = 200, 7
SPLITS = {"train.txt": (1600, 100), "valid.txt": (800, 101), "test.txt": (800, 102)}
LAUNCHER = "gpu2tpu_awd.py"
LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

Lets torch.load read the project's pickled model and corpus cache (torch >= 2.6 defaults to
weights_only=True), then runs the project's script unchanged: python {launcher} SCRIPT ARGS...
"""
import os
import runpy
import sys

os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def sentences(n_words: int, seed: int) -> list[str]:
    chain = np.random.default_rng(CHAIN_SEED).integers(0, VOCAB, size=(VOCAB, 3))
    zipf = 1.0 / np.arange(1, VOCAB + 1)
    zipf /= zipf.sum()
    rng = np.random.default_rng(seed)
    lines, line, word = [], [], int(rng.integers(VOCAB))
    for _ in range(n_words):
        word = int(chain[word, rng.integers(3)]) if rng.random() < 0.7 else int(rng.choice(VOCAB, p=zipf))
        line.append(f"w{word:03d}")
        if len(line) >= 5 and rng.random() < 0.12:
            lines.append(" " + " ".join(line) + " ")
            line = []
    if line:
        lines.append(" " + " ".join(line) + " ")
    return lines


def write(root: Path) -> None:
    out = root / "data" / "penn"
    out.mkdir(parents=True, exist_ok=True)
    for name, (n_words, seed) in SPLITS.items():
        (out / name).write_text("\n".join(sentences(n_words, seed)) + "\n")
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(launcher=LAUNCHER))


if __name__ == "__main__":
    task_kit.prepare_main(write, "salesforce/awd-lstm-lm")
