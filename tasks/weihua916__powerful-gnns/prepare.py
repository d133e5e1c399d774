"""Stand-in MUTAG for weihua916/powerful-gnns: dataset/MUTAG/MUTAG.txt and a held-out file.

The project's dataset.zip is absent from the snapshot. This writes small molecule-like graphs in
the text format util.load_data reads: a first line with the number of graphs, then per graph a
line `n label` and n node lines `tag degree neighbour...` (neighbours 0-based within the graph,
every edge listed from both ends, no node attributes). Like MUTAG: labels 1 and -1, 7 node tags,
10 to 28 nodes per graph, mostly tree-like with a few rings. The class is learnable but not
trivially: class 1 graphs have more nodes of tags 1 and 2 and one more ring on average, and the
two tag distributions overlap.

- dataset/MUTAG/MUTAG.txt: 160 graphs, what `python main.py --dataset MUTAG` trains on (its
  10-fold split, fold 0: 144 training graphs, 16 test graphs);
- dataset/MUTAG_heldout/MUTAG_heldout.txt: 400 other graphs from the same distribution, for
  evaluate.py (read with the same loader).

load_data numbers tags and labels in the order they first appear in a file, so the first graph of
each file has label 1 and starts with one node of each tag 0..6: both files then map tags and
labels alike. Deterministic (numpy seeds 0 and 1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from task_kit import prepare_main

N_TAGS, MIN_NODES, MAX_NODES = 7, 10, 28
TAG_P = {1: [0.42, 0.20, 0.16, 0.08, 0.06, 0.05, 0.03],
         -1: [0.42, 0.10, 0.08, 0.18, 0.12, 0.07, 0.03]}
RINGS = {1: 2, -1: 1}  # mean number of extra edges closing a ring
FILES = {"MUTAG": (160, 0), "MUTAG_heldout": (400, 1)}  # name: (graphs, seed)


def one_graph(rng: np.random.Generator, label: int, first: bool) -> list[str]:
    n = int(rng.integers(MIN_NODES, MAX_NODES + 1))
    tags = rng.choice(N_TAGS, size=n, p=TAG_P[label])
    if first:
        tags[:N_TAGS] = np.arange(N_TAGS)
    neighbours: list[set[int]] = [set() for _ in range(n)]
    for j in range(1, n):  # a random tree: each node joins an earlier one
        k = int(rng.integers(max(0, j - 4), j))
        neighbours[j].add(k)
        neighbours[k].add(j)
    for _ in range(int(rng.poisson(RINGS[label]))):  # ring closures, no self-loops or repeats
        a, b = (int(v) for v in rng.choice(n, size=2, replace=False))
        neighbours[a].add(b)
        neighbours[b].add(a)
    lines = [f"{n} {label}"]
    for j in range(n):
        nbrs = sorted(neighbours[j])
        lines.append(" ".join(str(v) for v in [int(tags[j]), len(nbrs), *nbrs]))
    return lines


def graphs_file(count: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    lines = [str(count)]
    for i in range(count):
        label = 1 if i == 0 else int(rng.choice([1, -1]))
        lines.extend(one_graph(rng, label, first=i == 0))
    return "\n".join(lines) + "\n"


def write(root: Path) -> None:
    for name, (count, seed) in FILES.items():
        out = root / "dataset" / name
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.txt").write_text(graphs_file(count, seed))


if __name__ == "__main__":
    prepare_main(write, "weihua916/powerful-gnns")
