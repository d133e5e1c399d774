"""The task kit: copied beside a task's evaluate.py and prepare.py (as `task_kit.py`) whenever the
harness runs them, so task code holds only what is particular to its project.

evaluate.py:  `evaluate_goal("accuracy", measure)`: parses --checkpoint/--out/--project, puts the
              pristine project (--project, or a practice task's project/) on sys.path,
              calls `measure(ckpt)` and writes goal.json; a
              `GoalUnavailable` raised by measure becomes the goal's `error`.
              `ckpt.state()` loads the checkpoint safely (weights_only) with `module.` and
              `_orig_mod.` prefixes removed.
prepare.py:   `prepare_main(write, "owner/name")`: `python prepare.py ROOT` calls write(ROOT).
              Stand-in data: `class_images`, `cifar10_files` (+ `parts`), `standin_cifar10`,
              `write_pickles`, `torchvision_md5_launcher`, `write_cora`, `token_sentences`;
              `require(root, *paths)`.
Measuring:    `recalibrate_batchnorm(model, batches)`, `block_cross_entropy(model, tokens)`.

Standard library only at import time; numpy and torch are imported by the functions that use them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIXES = ("module.", "_orig_mod.")  # DataParallel/DDP and torch.compile wrappers


class GoalUnavailable(Exception):
    """The checkpoint cannot be measured (the message is written as the goal's `error`)."""


def load_state(path: Path | str, key: str | None = None, as_float: bool = False) -> dict[str, Any]:
    """A checkpoint's state_dict on the CPU, loaded with weights_only=True (no pickled code runs).
    `key` picks an entry of a checkpoint that is a dict of several (e.g. "model"); `as_float`
    casts floating tensors to float32 (a migration may train in bf16 where the task allows it)."""
    import torch

    state = torch.load(str(path), map_location="cpu", weights_only=True)
    if key is not None:
        if not isinstance(state, dict) or key not in state:
            raise GoalUnavailable(f"checkpoint has no {key!r} entry")
        state = state[key]
    if not isinstance(state, dict):
        raise GoalUnavailable(f"checkpoint is a {type(state).__name__}, not a state_dict")
    out = {_strip(k): v for k, v in state.items()}
    if as_float:
        out = {k: v.float() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in out.items()}
    return out


def _strip(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for prefix in PREFIXES:
            if name.startswith(prefix):
                name, changed = name[len(prefix):], True
    return name


@dataclass(frozen=True)
class Checkpoint:
    """What evaluate.py measures: the trained checkpoint, and the pristine project tree (an
    upstream task's prepared tree, or a practice task's own project/)."""

    path: Path
    project: Path

    def state(self, key: str | None = None, as_float: bool = False) -> dict[str, Any]:
        return load_state(self.path, key, as_float)


def write_goal(out: Path | str, metric: str, value: float | None, error: str | None = None) -> None:
    data: dict[str, Any] = {"schema_version": 1, "metric": metric, "value": value}
    if error:
        data["error"] = error
    Path(out).write_text(json.dumps(data))


def evaluate_goal(metric: str, measure: Callable[[Checkpoint], float],
                  argv: list[str] | None = None) -> None:
    """evaluate.py's whole command line: --checkpoint FILE --out FILE [--project DIR]."""
    parser = argparse.ArgumentParser(description=f"measure the task's goal metric ({metric})")
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--project", type=Path, help="the pristine, prepared project tree")
    args = parser.parse_args(argv)
    own = Path(sys.argv[0]).resolve().parent / "project"  # a practice task's code, beside it
    project = args.project or (own if own.is_dir() else None)
    try:
        if project is None:
            raise GoalUnavailable("no project to build the model from: --project DIR, or a project/ "
                                  "folder beside evaluate.py")
        sys.path.insert(0, str(project))
        value: float | None = float(measure(Checkpoint(args.checkpoint, project)))
        error = None
    except GoalUnavailable as exc:
        value, error = None, str(exc)
    write_goal(args.out, metric, value, error)


def prepare_main(write: Callable[[Path], None], project: str, argv: list[str] | None = None) -> None:
    """prepare.py's whole command line: `python prepare.py ROOT` writes stand-in data into ROOT."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        sys.exit(f"usage: python prepare.py ROOT (the materialised {project} tree)")
    write(Path(args[0]))


def require(root: Path, *paths: str) -> None:
    """Exit with a clear message unless every path exists under root (the files prepare.py reads
    from the verified tree)."""
    missing = [p for p in paths if not (root / p).exists()]
    if missing:
        sys.exit(f"{root} lacks {', '.join(missing)}: give the materialised project tree "
                 "(gpu2tpu tasks materialise ID --to DIR)")


def class_images(n: int, seed: int, classes: int = 10, side: int = 32, channels: int = 3,
                 noise: float = 30.0) -> tuple[Any, list[int]]:
    """n learnable stand-in images, uint8 (n, channels, side, side), and their labels: each class
    has its own mean colour and a brighter square at its own place, with pixel noise."""
    import numpy as np

    palette = np.random.default_rng(1234).integers(40, 216, size=(classes, channels))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, size=n)
    img = palette[labels][:, :, None, None] + rng.normal(0.0, noise, size=(n, channels, side, side))
    square, margin, down, across = side * 10 // 32, side // 16, side // 4, side * 7 // 32
    for k, c in enumerate(labels):
        row, col = (int(c) // 4) % 3, int(c) % 4  # 12 places; more classes share them
        y, x = margin + down * row, margin + across * col
        img[k, :, y:y + square, x:x + square] += 60.0
    return np.clip(np.rint(img), 0, 255).astype(np.uint8), [int(c) for c in labels]


CIFAR10_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
                   "truck"]


def cifar10_files(train: Sequence[tuple[Any, Sequence[int]]],
                  test: tuple[Any, Sequence[int]]) -> dict[str, Any]:
    """torchvision's cifar-10-batches-py as {file name: object} for `write_pickles`: data_batch_1..N,
    one for each (uint8 images, labels) part of `train` (images (n, 3, 32, 32) or (n, 3072)),
    test_batch from `test`, batches.meta. Image file names are standin_<part>_<k>.png (test: 0)."""
    def batch(name: str, part: int, images: Any, labels: Sequence[int]) -> dict[str, Any]:
        return {"batch_label": name, "labels": [int(c) for c in labels],
                "data": images.reshape(len(images), -1),
                "filenames": [f"standin_{part}_{k:05d}.png" for k in range(len(images))]}

    files = {f"data_batch_{i}": batch(f"training batch {i} of {len(train)}", i, *part)
             for i, part in enumerate(train, 1)}
    files["test_batch"] = batch("testing batch 1 of 1", 0, *test)
    files["batches.meta"] = {"num_cases_per_batch": len(train[0][1]),
                             "label_names": CIFAR10_CLASSES, "num_vis": 3 * 32 * 32}
    return files


def standin_cifar10(train_files: int, per_file: int, n_test: int) -> dict[str, Any]:
    """`cifar10_files` of `class_images`: train part i (1..train_files) is per_file images drawn
    with seed i, the test batch n_test images with seed 0."""
    return cifar10_files([class_images(per_file, i) for i in range(1, train_files + 1)],
                         class_images(n_test, 0))


def parts(images: Any, labels: Sequence[int], n: int) -> list[tuple[Any, Sequence[int]]]:
    """(images, labels) cut into n equal consecutive parts (a remainder is dropped)."""
    size = len(labels) // n
    return [(images[i * size:(i + 1) * size], labels[i * size:(i + 1) * size]) for i in range(n)]


def write_pickles(out_dir: Path, files: Mapping[str, Any]) -> dict[str, str]:
    """Each object pickled (protocol 2, as CIFAR ships) to out_dir/<name>; returns name -> md5."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md5 = {}
    for name, content in files.items():
        blob = pickle.dumps(content, protocol=2)
        (out_dir / name).write_bytes(blob)
        md5[name] = hashlib.md5(blob).hexdigest()
    return md5


_MD5_LAUNCHER = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

torchvision's {dataset} checks each file's md5 against the real data set (and would download it
otherwise); the expected md5s become those of the stand-in files, so the check still runs. Then it
runs the project's script unchanged: python {name} SCRIPT ARGS...
"""
import runpy
import sys

import torchvision.datasets as datasets

MD5 = {md5!r}

data = datasets.{dataset}
data.train_list = [[f, MD5[f]] for f, _ in data.train_list]
data.test_list = [[f, MD5[f]] for f, _ in data.test_list]
data.meta = {{**data.meta, "md5": MD5[data.meta["filename"]]}}

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def torchvision_md5_launcher(root: Path, name: str, md5: Mapping[str, str],
                             dataset: str = "CIFAR10") -> Path:
    """Write root/<name>: a launcher that makes torchvision's `dataset` accept the stand-in files
    (their md5s instead of the real ones) and runs the project's script with its own arguments.
    Declare it in task.yaml's prepare.outputs, so it is protected."""
    path = root / name
    path.write_text(_MD5_LAUNCHER.format(dataset=dataset, name=name, md5=dict(md5)))
    return path


CORA_CLASSES = ["Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
                "Reinforcement_Learning", "Rule_Learning", "Theory"]


def write_cora(out_dir: Path, papers: int, words: int, edges: int, seed: int = 0) -> None:
    """Stand-in Cora in its raw format: out_dir/cora.content, a line per paper `<id> <0/1 word
    attributes...> <class>` (tab separated), and cora.cites, `<cited id> <citing id>` per line.
    Words follow each class's favoured words and 80% of citations stay within a class, so the
    graph is learnable; every paper has a word. Deterministic in `seed`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    classes = len(CORA_CLASSES)
    out_dir.mkdir(parents=True, exist_ok=True)
    ids = rng.choice(np.arange(1000, 2_000_000), size=papers, replace=False)
    labels = rng.integers(0, classes, size=papers)
    topic = rng.random((classes, words)) < 0.15  # each class's favoured words
    prob = np.where(topic[labels], 0.35, 0.04)
    has = (rng.random((papers, words)) < prob).astype(int)
    has[np.arange(papers), rng.integers(0, words, papers)] = 1  # no empty paper
    lines = ["\t".join([str(ids[i]), *map(str, has[i]), CORA_CLASSES[labels[i]]])
             for i in range(papers)]
    (out_dir / "cora.content").write_text("\n".join(lines) + "\n")
    src = rng.integers(0, papers, size=edges)
    same = rng.random(edges) < 0.8
    dst = np.empty(edges, dtype=int)
    for k in range(edges):
        pool = np.flatnonzero(labels == labels[src[k]]) if same[k] else np.arange(papers)
        dst[k] = pool[rng.integers(0, len(pool))]
    keep = src != dst
    pairs = sorted(set(zip(ids[dst[keep]].tolist(), ids[src[keep]].tolist())))
    (out_dir / "cora.cites").write_text("".join(f"{a}\t{b}\n" for a, b in pairs))


def recalibrate_batchnorm(model: Any, batches: Iterable[Any]) -> None:
    """Every BatchNorm2d's running statistics recomputed as the plain average over `batches`
    (forward passes in train mode, no gradients); the model is left in eval mode."""
    import torch

    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the calibration batches
        model.train()
        for batch in batches:
            model(batch)
    model.eval()


def block_cross_entropy(model: Any, tokens: Any) -> float:
    """A language model's mean next-token cross-entropy over `tokens` (1-D) cut into
    non-overlapping windows of `model.block_size`; the model returns (logits, anything)."""
    import torch
    import torch.nn.functional as F

    model.eval()
    block = model.block_size
    n = (len(tokens) - 1) // block
    x, y = tokens[: n * block].view(n, block), tokens[1: n * block + 1].view(n, block)
    with torch.no_grad():
        logits, _ = model(x)
        return float(F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item())


def token_sentences(n_words: int, seed: int, vocab: int = 200, mean_len: int = 12) -> list[str]:
    """Stand-in text with learnable structure: words drawn from a per-topic Zipf-like vocabulary,
    sentences of a topic stay on it (w0..w{vocab-1}, one sentence a line)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    topics = 4
    weights = 1.0 / np.arange(1, vocab + 1)
    orders = [np.random.default_rng(100 + t).permutation(vocab) for t in range(topics)]
    out: list[str] = []
    total = 0
    while total < n_words:
        t = int(rng.integers(0, topics))
        length = max(3, int(rng.poisson(mean_len)))
        picks = rng.choice(vocab, size=length, p=weights / weights.sum())
        out.append(" ".join(f"w{orders[t][p]}" for p in picks))
        total += length
    return out
