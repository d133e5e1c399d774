"""Stand-in FB15k-237-betae for snap-stanford/KGReasoning, plus the launcher that runs it on NumPy 2.4.

The BetaE query datasets are absent from the snapshot. This writes data/FB15k-237-betae/ in the
format main.py's load_data reads: stats.txt (`numentity: N` and `numrelations: R`, the number last
on each line), id2ent.pkl and id2rel.pkl (id -> name), and the pickled query files
train-queries.pkl, train-answers.pkl, valid-/test-queries.pkl, valid-/test-easy-answers.pkl and
valid-/test-hard-answers.pkl: queries are dicts {query structure: set of queries}, a query a nested
tuple of entity and relation ids shaped like its structure (1p (e, (r,)), 2p (e, (r1, r2)), 2i
((e1, (r1,)), (e2, (r2,)))), answers dicts {query: set of entity ids}.

The knowledge graph has learnable structure: 120 entities in 12 clusters of 10, 6 relations, each
relation r sending every entity of cluster c to 3 random entities of cluster (c + shift_r) mod 12
(a translation between clusters, which the project's vector model, GQE, can represent). Its edges
are split 80/10/10 into train, valid and test graphs; as in the BetaE datasets, training queries
and answers come from the training graph, valid (test) queries from the graph with the valid
(and test) edges added, their easy answers reachable without the new edges and their hard answers
(the ranked ones, at least one per query) only through them. 160 training queries of each of 1p,
2p and 2i (so the path and the other training iterators have 320 and 160 queries, whole batches
of 32), 20 valid and 20 test queries of each.

Launcher gpu2tpu_kgr.py (harness-owned, protected): dataloader.py samples negatives with
numpy.in1d, which NumPy 2.4 removed; the launcher restores it as numpy's own replacement
(np.isin on the flattened first argument, what in1d computed), then runs the project's script
unchanged with its own arguments. Deterministic (numpy seed 0).
"""

from __future__ import annotations

import os
import pickle
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_kit import prepare_main  # noqa: E402

DATA = Path("data") / "FB15k-237-betae"
LAUNCHER = "gpu2tpu_kgr.py"
GRID, CLUSTER_SIZE, TAILS = 4, 5, 2
MOVES = [(0, 1), (1, 0), (1, 1), (0, 2), (2, 0), (1, -1)]  # relation r: (row, column) step
N_ENTITIES, N_RELATIONS = GRID * GRID * CLUSTER_SIZE, len(MOVES)
COUNTS = {"train": 128, "valid": 20, "test": 20}  # queries per structure
P1 = ("e", ("r",))
P2 = ("e", ("r", "r"))
I2 = (("e", ("r",)), ("e", ("r",)))

LAUNCHER_TEXT = '''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

NumPy 2.4 removed numpy.in1d, which the project's negative sampling calls; this restores it as
np.isin on the flattened first argument (what in1d returned), then runs the project's script
unchanged: python {launcher} SCRIPT ARGS...
"""
import runpy
import sys

import numpy as np

if not hasattr(np, "in1d"):
    def in1d(ar1, ar2, assume_unique=False, invert=False):
        return np.isin(np.asarray(ar1).ravel(), ar2, assume_unique=assume_unique, invert=invert)

    np.in1d = in1d
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''

Graph = dict  # (head, relation) -> set of tails


def edges(rng: np.random.Generator) -> list[tuple[int, int, int]]:
    out = []
    for h in range(N_ENTITIES):
        row, col = divmod(h // CLUSTER_SIZE, GRID)
        for r, (d_row, d_col) in enumerate(MOVES):
            if not (0 <= row + d_row < GRID and 0 <= col + d_col < GRID):
                continue
            cluster = (row + d_row) * GRID + col + d_col
            for t in rng.choice(CLUSTER_SIZE, size=TAILS, replace=False):
                out.append((h, r, cluster * CLUSTER_SIZE + int(t)))
    return out


def graph(triples: list[tuple[int, int, int]]) -> Graph:
    g: Graph = defaultdict(set)
    for h, r, t in triples:
        g[(h, r)].add(t)
    return g


def answers(g: Graph, query: tuple) -> set[int]:
    if isinstance(query[0], tuple):  # 2i: the intersection of its branches
        return answers(g, query[0]) & answers(g, query[1])
    current = {query[0]}
    for r in query[1]:
        current = {t for e in current for t in g.get((e, r), ())}
    return current


def random_query(rng: np.random.Generator, g: Graph, structure: tuple) -> tuple | None:
    heads = sorted(g)
    if structure == P1:
        h, r = heads[rng.integers(len(heads))]
        return (h, (r,))
    if structure == P2:
        h, r = heads[rng.integers(len(heads))]
        return (h, (r, int(rng.integers(N_RELATIONS))))
    # 2i: two different (head, relation) branches that share a tail
    h, r = heads[rng.integers(len(heads))]
    tail = sorted(g[(h, r)])[rng.integers(len(g[(h, r)]))]
    others = [k for k in heads if tail in g[k] and k != (h, r)]
    if not others:
        return None
    h2, r2 = others[rng.integers(len(others))]
    return ((h, (r,)), (h2, (r2,)))


def split_queries(rng, g_new: Graph, g_old: Graph | None, count: int, taken: set):
    """count queries per structure answered on g_new; with g_old, each with a hard answer."""
    queries, easy, hard = {}, {}, {}
    for structure in (P1, P2, I2):
        chosen: set = set()
        for _ in range(100 * count):
            if len(chosen) == count:
                break
            q = random_query(rng, g_new, structure)
            if q is None or q in chosen or q in taken:
                continue
            full = answers(g_new, q)
            old = answers(g_old, q) if g_old is not None else set()
            if not full or (g_old is not None and not full - old):
                continue
            chosen.add(q)
            easy[q], hard[q] = old, full - old
        if len(chosen) < count:
            raise RuntimeError(f"only {len(chosen)} queries of {structure} found")
        queries[structure] = chosen
        taken |= chosen
    return queries, easy, hard


def write(root: Path) -> None:
    rng = np.random.default_rng(0)
    triples = edges(rng)
    order = rng.permutation(len(triples))
    n_train, n_valid = int(0.8 * len(triples)), int(0.1 * len(triples))
    train = [triples[i] for i in order[:n_train]]
    valid = train + [triples[i] for i in order[n_train:n_train + n_valid]]
    g_train, g_valid, g_test = graph(train), graph(valid), graph(triples)
    taken: set = set()
    train_q, _, train_a = split_queries(rng, g_train, None, COUNTS["train"], taken)
    valid_q, valid_easy, valid_hard = split_queries(rng, g_valid, g_train, COUNTS["valid"], taken)
    test_q, test_easy, test_hard = split_queries(rng, g_test, g_valid, COUNTS["test"], taken)
    out = root / DATA
    out.mkdir(parents=True, exist_ok=True)
    (out / "stats.txt").write_text(f"numentity: {N_ENTITIES}\nnumrelations: {N_RELATIONS}\n")
    files = {
        "id2ent.pkl": {i: f"/m/standin_{i:03d}" for i in range(N_ENTITIES)},
        "id2rel.pkl": {i: f"/standin/relation_{i}" for i in range(N_RELATIONS)},
        "train-queries.pkl": train_q, "train-answers.pkl": train_a,
        "valid-queries.pkl": valid_q, "valid-easy-answers.pkl": valid_easy,
        "valid-hard-answers.pkl": valid_hard,
        "test-queries.pkl": test_q, "test-easy-answers.pkl": test_easy,
        "test-hard-answers.pkl": test_hard,
    }
    for name, obj in files.items():
        with open(out / name, "wb") as f:
            pickle.dump(obj, f, protocol=4)
    (root / LAUNCHER).write_text(LAUNCHER_TEXT.format(launcher=LAUNCHER))


if __name__ == "__main__":
    prepare_main(write, "snap-stanford/KGReasoning")
