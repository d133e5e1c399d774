"""Goal metric for weihua916/powerful-gnns (GIN): accuracy on 400 held-out stand-in graphs.

Builds GraphCNN with the pristine project's own code (--project), with the command's model
configuration (sum neighbour and graph pooling, eps not learnt, final dropout 0) and its depth
and width read from the trained state_dict; loads the held-out graphs prepare.py wrote with the
project's own util.load_data, and classifies them in evaluation mode (BatchNorm running
statistics) on the CPU, in the project's minibatches of 64.
Usage: python evaluate.py --checkpoint FILE --project ROOT --out FILE
"""

from __future__ import annotations

import os

import task_kit
import torch

HELDOUT = "MUTAG_heldout"


def measure(ckpt: task_kit.Checkpoint) -> float:
    os.chdir(ckpt.project)  # load_data and graphcnn.py's sys.path entry are relative to the root
    from models.graphcnn import GraphCNN
    from util import load_data

    state = ckpt.state(as_float=True)
    heads = sorted(k for k in state if k.startswith("linears_prediction.") and k.endswith(".weight"))
    if not heads or "eps" not in state:
        raise task_kit.GoalUnavailable("the checkpoint holds no GraphCNN (no linears_prediction.*, eps)")
    num_layers = len(heads)
    mlp_linears = [k for k in state if k.startswith("mlps.0.linears.") and k.endswith(".weight")]
    num_mlp_layers = len(mlp_linears) or 1
    num_classes, input_dim = state["linears_prediction.0.weight"].shape
    hidden_dim = state["linears_prediction.1.weight"].shape[1]

    graphs, classes = load_data(HELDOUT, False)
    features = graphs[0].node_features.shape[1]
    if (features, classes) != (input_dim, num_classes):
        raise task_kit.GoalUnavailable(f"the model takes {input_dim} tags and {num_classes} classes, "
                                       f"the held-out graphs have {features} and {classes}")
    model = GraphCNN(num_layers, num_mlp_layers, input_dim, hidden_dim, num_classes, 0.0, False,
                     "sum", "sum", torch.device("cpu"))
    model.load_state_dict(state)
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(graphs), 64):
            batch = graphs[i:i + 64]
            pred = model(batch).argmax(1)
            correct += int((pred == torch.tensor([g.label for g in batch])).sum())
    accuracy = correct / len(graphs)
    print(f"held-out accuracy {accuracy:.4f} ({correct}/{len(graphs)})")
    return accuracy


if __name__ == "__main__":
    task_kit.evaluate_goal("accuracy", measure)
