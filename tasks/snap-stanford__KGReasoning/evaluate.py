"""Goal metric for snap-stanford/KGReasoning (GQE, --geo vec): mean test MRR over 1p, 2p and 2i.

Builds KGReasoning with the pristine project's own code (--project), its width and margin read
from the trained state_dict (entity_embedding, gamma), loads the weights and runs the project's
own KGReasoning.test_step on the CPU over the stand-in test queries prepare.py wrote (60 queries,
batches of one as the command's --test_batch_size default): the filtered MRR of the hard answers,
averaged per query structure and then over the structures, as main.py's evaluate logs
`Test average MRR`.
Usage: python evaluate.py --checkpoint FILE --project ROOT --out FILE
"""

from __future__ import annotations

import argparse
import os
import pickle

import task_kit
import torch

DATA = os.path.join("data", "FB15k-237-betae")
STRUCTURES = {"1p": ("e", ("r",)), "2p": ("e", ("r", "r")), "2i": (("e", ("r",)), ("e", ("r",)))}


def load(name: str):
    with open(os.path.join(DATA, name), "rb") as f:
        return pickle.load(f)


def measure(ckpt: task_kit.Checkpoint) -> float:
    os.chdir(ckpt.project)
    from dataloader import TestDataset
    from models import KGReasoning
    from torch.utils.data import DataLoader
    from util import flatten_query

    state = ckpt.state(as_float=True)
    needed = ("entity_embedding", "relation_embedding", "gamma", "center_net.layer1.weight")
    if any(k not in state for k in needed):
        raise task_kit.GoalUnavailable(f"the checkpoint holds no GQE KGReasoning (keys {sorted(state)[:6]})")
    nentity, dim = state["entity_embedding"].shape
    nrelation = state["relation_embedding"].shape[0]
    names = {v: k for k, v in STRUCTURES.items()}
    model = KGReasoning(nentity=nentity, nrelation=nrelation, hidden_dim=dim,
                        gamma=float(state["gamma"][0]), geo="vec", use_cuda=False,
                        test_batch_size=1, query_name_dict=names)
    model.load_state_dict(state)
    queries = load("test-queries.pkl")
    queries = {s: q for s, q in queries.items() if s in names}
    loader = DataLoader(TestDataset(flatten_query(queries), nentity, nrelation), batch_size=1,
                        collate_fn=TestDataset.collate_fn)
    args = argparse.Namespace(cuda=False, test_batch_size=1, print_on_screen=False, test_log_steps=1000)
    with torch.no_grad():
        metrics = model.test_step(model, load("test-easy-answers.pkl"), load("test-hard-answers.pkl"),
                                  args, loader, names)
    per_structure = {names[s]: m["MRR"] for s, m in metrics.items()}
    mrr = sum(per_structure.values()) / len(per_structure)
    print(f"test MRR {mrr:.4f} per structure {per_structure}")
    return mrr


if __name__ == "__main__":
    task_kit.evaluate_goal("test_mrr", measure)
