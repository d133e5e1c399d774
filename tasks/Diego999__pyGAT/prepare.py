"""Stand-in Cora for Diego999/pyGAT: data/cora/cora.content (absent from the snapshot) and a
cora.cites that matches it (the snapshot's real citations name papers the stand-in does not have).

The loader's format: cora.content has one line per paper, `<paper id> <0/1 word attributes...>
<class label>` (tab separated); cora.cites one `<cited id> <citing id>` pair per line. 1500 papers
(the loader's fixed splits reach index 1499; the dense GAT's attention is N x N per head), 64 word
attributes, 7 classes; words and most citations follow the class, so attention over neighbours
helps. Deterministic (numpy seed 0).
"""

from __future__ import annotations

from pathlib import Path

from task_kit import prepare_main

N_PAPERS, N_WORDS, N_CLASSES, N_EDGES = 1500, 64, 7, 3500
CLASSES = ["Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
           "Reinforcement_Learning", "Rule_Learning", "Theory"]


def write(root: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    out = root / "data" / "cora"
    out.mkdir(parents=True, exist_ok=True)
    ids = rng.choice(np.arange(1000, 2_000_000), size=N_PAPERS, replace=False)
    labels = rng.integers(0, N_CLASSES, size=N_PAPERS)
    topic = rng.random((N_CLASSES, N_WORDS)) < 0.15  # each class's favoured words
    prob = np.where(topic[labels], 0.35, 0.04)
    words = (rng.random((N_PAPERS, N_WORDS)) < prob).astype(int)
    words[np.arange(N_PAPERS), rng.integers(0, N_WORDS, N_PAPERS)] = 1  # no empty paper
    lines = ["\t".join([str(ids[i]), *map(str, words[i]), CLASSES[labels[i]]]) for i in range(N_PAPERS)]
    (out / "cora.content").write_text("\n".join(lines) + "\n")
    src = rng.integers(0, N_PAPERS, size=N_EDGES)
    same = rng.random(N_EDGES) < 0.8  # most citations stay within a class
    dst = np.empty(N_EDGES, dtype=int)
    for k in range(N_EDGES):
        pool = np.flatnonzero(labels == labels[src[k]]) if same[k] else np.arange(N_PAPERS)
        dst[k] = pool[rng.integers(0, len(pool))]
    keep = src != dst
    pairs = sorted(set(zip(ids[dst[keep]].tolist(), ids[src[keep]].tolist())))
    (out / "cora.cites").write_text("".join(f"{a}\t{b}\n" for a, b in pairs))


if __name__ == "__main__":
    prepare_main(write, "Diego999/pyGAT")
