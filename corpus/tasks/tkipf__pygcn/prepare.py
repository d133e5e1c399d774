"""Stand-in Cora for tkipf/pygcn: data/cora/cora.content and data/cora/cora.cites.

Same format as the real files (tab separated; content: paper id, binary word features, class
name; cites: cited id, citing id), smaller: 1600 papers, 7 classes, 200 words. Features and
citations are class-correlated so the GCN can learn. Deterministic (numpy seed 0).
Usage: python prepare.py ROOT
"""
import sys
from pathlib import Path

import numpy as np

CLASSES = ["Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
           "Reinforcement_Learning", "Rule_Learning", "Theory"]
N_PAPERS, N_WORDS, N_CITES = 1600, 200, 4000


def main(root: Path) -> None:
    rng = np.random.RandomState(0)
    out = root / "data" / "cora"
    out.mkdir(parents=True, exist_ok=True)
    ids = rng.choice(np.arange(1000, 1_000_000), size=N_PAPERS, replace=False)
    labels = rng.randint(len(CLASSES), size=N_PAPERS)
    topic = rng.rand(len(CLASSES), N_WORDS) < 0.08          # each class's characteristic words
    noise = rng.rand(N_PAPERS, N_WORDS) < 0.03
    keep = rng.rand(N_PAPERS, N_WORDS) < 0.5                # a paper uses half its class words
    words = ((topic[labels] & keep) | noise).astype(int)
    with open(out / "cora.content", "w") as f:
        for i in range(N_PAPERS):
            f.write("\t".join([str(ids[i]), *map(str, words[i]), CLASSES[labels[i]]]) + "\n")
    edges = set()
    while len(edges) < N_CITES:
        a = rng.randint(N_PAPERS)
        same = np.flatnonzero(labels == labels[a])
        b = rng.choice(same) if rng.rand() < 0.8 else rng.randint(N_PAPERS)
        if a != b:
            edges.add((int(a), int(b)))
    with open(out / "cora.cites", "w") as f:
        for a, b in sorted(edges):
            f.write(f"{ids[a]}\t{ids[b]}\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python prepare.py ROOT (the materialised tkipf/pygcn tree)")
    main(Path(sys.argv[1]))
