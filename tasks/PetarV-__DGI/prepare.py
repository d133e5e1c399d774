"""Stand-in Cora for PetarV-/DGI, and the harness-owned launcher that runs execute.py.

utils/process.py's load_data('cora') reads the planetoid files data/ind.cora.{x,y,tx,ty,allx,ally,
graph,test.index}. Written here in that layout (replacing the snapshot's real Cora, 2708 papers x
1433 words, whose 2708 x 2708 adjacency times 512 hidden units is too slow for a CPU-emulated
device): a synthetic citation graph of N_NODES papers in CLASSES topics, each paper a bag of
N_WORDS binary words (mostly its topic's words) and about DEGREE citations (most to its own topic).
The first N_TRAIN papers are the labelled ones (x, y), load_data's validation split is the next 500,
the last N_TEST papers are the test split (tx, ty, test.index, in a shuffled order as planetoid's).

gpu2tpu_dgi.py runs execute.py unchanged after two run-time adjustments:
- utils/process.py imports `eigsh` from scipy.sparse.linalg.eigen.arpack, a module path scipy
  removed (1.8+): the launcher registers that module, holding scipy.sparse.linalg.eigsh.
- execute.py hard-codes its loops (10000 epochs with early stopping, then 50 linear probes of 100
  steps each) and has no flags: the launcher runs it with a `range` of its own in the script's
  globals that shortens exactly those three: range(10000) -> range(EPOCHS), range(50) -> range(1)
  and range(100) -> range(0). The linear probe's accuracy is evaluate.py's goal, computed from the
  trained weights; every other range is the builtin.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task_kit import prepare_main  # noqa: E402

CLASSES, N_NODES, N_TRAIN, N_TEST, N_WORDS = 7, 800, 70, 200, 100
WORDS_PER_CLASS, WORDS_PER_PAPER, DEGREE, SAME_TOPIC = 12, 8, 3, 0.8
EPOCHS = 40
LAUNCHER = "gpu2tpu_dgi.py"
FILES = ["x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"]

LAUNCHER_TEXT = f'''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

python {LAUNCHER} execute.py: run-time adjustments, then execute.py runs unchanged.
- utils/process.py imports eigsh from scipy.sparse.linalg.eigen.arpack, which scipy 1.8 removed:
  that module is registered here, holding scipy.sparse.linalg.eigsh.
- execute.py hard-codes its loops and has no flags: it runs with a `range` in its globals that
  shortens exactly three of them: the 10000 training epochs (early stopping with patience 20) to
  {EPOCHS}, the 50 linear probes after training to 1 and their 100 training steps to 0 (the probe's
  accuracy is the task's goal, measured by evaluate.py from the trained weights).
"""
import builtins
import runpy
import sys
import types

import scipy.sparse.linalg

_arpack = types.ModuleType("scipy.sparse.linalg.eigen.arpack")
_arpack.eigsh = scipy.sparse.linalg.eigsh
_eigen = types.ModuleType("scipy.sparse.linalg.eigen")
_eigen.arpack = _arpack
sys.modules.setdefault("scipy.sparse.linalg.eigen", _eigen)
sys.modules["scipy.sparse.linalg.eigen.arpack"] = _arpack

_SHORTER = {{10000: {EPOCHS}, 50: 1, 100: 0}}


def _range(*args):
    if len(args) == 1 and args[0] in _SHORTER:
        return builtins.range(_SHORTER[args[0]])
    return builtins.range(*args)


sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], init_globals={{"range": _range}}, run_name="__main__")
'''


def citation_graph(seed: int = 0):
    """Features (N_NODES, N_WORDS) 0/1, topics (N_NODES,), and an undirected edge list."""
    import numpy as np

    rng = np.random.RandomState(seed)
    topics = rng.randint(0, CLASSES, size=N_NODES)
    words = rng.permutation(N_WORDS)[:CLASSES * WORDS_PER_CLASS].reshape(CLASSES, WORDS_PER_CLASS)
    feats = np.zeros((N_NODES, N_WORDS), dtype=np.float32)
    for i, t in enumerate(topics):
        own = rng.choice(words[t], size=WORDS_PER_PAPER - 2, replace=False)
        feats[i, own] = 1.0
        feats[i, rng.randint(0, N_WORDS, size=2)] = 1.0
    by_topic = [np.flatnonzero(topics == t) for t in range(CLASSES)]
    edges = set()
    for i, t in enumerate(topics):
        for _ in range(DEGREE):
            pool = by_topic[t] if rng.rand() < SAME_TOPIC else np.arange(N_NODES)
            j = int(rng.choice(pool))
            if j != i:
                edges.add((min(i, j), max(i, j)))
    return feats, topics, sorted(edges)


def write(root: Path) -> None:
    import pickle

    import numpy as np
    import scipy.sparse as sp

    feats, topics, edges = citation_graph()
    onehot = np.eye(CLASSES, dtype=np.int64)[topics]
    n_all = N_NODES - N_TEST
    test_order = np.arange(n_all, N_NODES)[np.random.RandomState(1).permutation(N_TEST)]
    graph: dict[int, list[int]] = {i: [] for i in range(N_NODES)}
    for i, j in edges:
        graph[i].append(j)
        graph[j].append(i)
    objects = {
        "x": sp.csr_matrix(feats[:N_TRAIN]), "y": onehot[:N_TRAIN],
        "allx": sp.csr_matrix(feats[:n_all]), "ally": onehot[:n_all],
        # row k of tx/ty is paper test_order[k] (load_data puts it back in place)
        "tx": sp.csr_matrix(feats[test_order]), "ty": onehot[test_order],
        "graph": graph,
    }
    data = root / "data"
    data.mkdir(exist_ok=True)
    for name, obj in objects.items():
        with open(data / f"ind.cora.{name}", "wb") as f:
            pickle.dump(obj, f, protocol=2)
    (data / "ind.cora.test.index").write_text("".join(f"{int(i)}\n" for i in test_order))
    (root / LAUNCHER).write_text(LAUNCHER_TEXT)


if __name__ == "__main__":
    prepare_main(write, "PetarV-/DGI")
