"""Goal metric for PetarV-/DGI: the Deep Graph Infomax objective of the trained model on fixed
corruptions the run never drew (lower is better).

Builds DGI (512 hidden units, PReLU, as execute.py) from the pristine project, loads the trained
state_dict, loads and preprocesses the stand-in Cora with the project's own utils/process.py (sparse
adjacency on the CPU, as upstream), and averages the project's loss, BCE-with-logits of the
discriminator on (real, row-shuffled) node pairs, over N_CORRUPTIONS permutations drawn from
numpy's RandomState(EVAL_SEED). Measured: 0.69 for an untrained model; about 0.08 after the task's
40 epochs on the CPU reference.
"""

from __future__ import annotations

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the kit (run with -I)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

N_CORRUPTIONS, EVAL_SEED, HIDDEN = 8, 12345, 512


def _scipy_shim() -> None:
    """utils/process.py imports eigsh from scipy.sparse.linalg.eigen.arpack (gone since scipy 1.8)."""
    import scipy.sparse.linalg

    arpack = types.ModuleType("scipy.sparse.linalg.eigen.arpack")
    arpack.eigsh = scipy.sparse.linalg.eigsh  # type: ignore[attr-defined]
    sys.modules.setdefault("scipy.sparse.linalg.eigen", types.ModuleType("scipy.sparse.linalg.eigen"))
    sys.modules["scipy.sparse.linalg.eigen.arpack"] = arpack


def measure(ckpt: Checkpoint) -> float:
    import numpy as np
    import scipy.sparse as sp
    import torch

    _scipy_shim()
    from models import DGI  # the pristine, verified tree
    from utils import process

    state = ckpt.state()
    if "disc.f_k.weight" not in state:
        raise GoalUnavailable("the checkpoint holds no DGI discriminator")
    cwd = os.getcwd()
    os.chdir(ckpt.project)  # load_data reads data/ind.cora.* relative to the working folder
    try:
        adj, features, _, _, _, _ = process.load_data("cora")
    finally:
        os.chdir(cwd)
    features, _ = process.preprocess_features(features)
    adj = process.normalize_adj(adj + sp.eye(adj.shape[0]))
    sp_adj = process.sparse_mx_to_torch_sparse_tensor(adj)
    features = torch.FloatTensor(np.asarray(features)[np.newaxis])
    nb_nodes = features.shape[1]

    model = DGI(features.shape[2], HIDDEN, "prelu")
    model.load_state_dict(state)
    model.eval()
    lbl = torch.cat((torch.ones(1, nb_nodes), torch.zeros(1, nb_nodes)), 1)
    rng = np.random.RandomState(EVAL_SEED)
    losses = []
    with torch.no_grad():
        for _ in range(N_CORRUPTIONS):
            shuf = features[:, rng.permutation(nb_nodes), :]
            logits = model(features, shuf, sp_adj, True, None, None, None)
            losses.append(float(torch.nn.functional.binary_cross_entropy_with_logits(logits, lbl)))
    return sum(losses) / len(losses)


if __name__ == "__main__":
    evaluate_goal("dgi_loss", measure)
