"""Goal metric for vgsatorras/egnn (n-body, EGNN_vel): position MSE on the stand-in test split.

Builds EGNN_vel with the pristine project's own code (ROOT), infers its width and depth from the
trained state_dict, reads the test split with the project's NBodyDataset (frame 30 -> frame 40)
and predicts the final positions from the same inputs the training script feeds the model:
node feature |v|, edge attributes (charge product, squared distance).
Usage: python evaluate.py --checkpoint FILE --project ROOT --out FILE
"""
import os

import task_kit
import torch


def measure(ckpt: task_kit.Checkpoint) -> float:
    os.chdir(ckpt.project)  # NBodyDataset reads n_body_system/dataset/ relative to the working directory
    from n_body_system.dataset_nbody import NBodyDataset
    from n_body_system.model import EGNN_vel

    state = ckpt.state(as_float=True)
    layers = len({k.split(".")[0] for k in state if k.startswith("gcl_")})
    hidden = state["embedding.weight"].shape[0]
    model = EGNN_vel(in_node_nf=1, in_edge_nf=2, hidden_nf=hidden, device="cpu", n_layers=layers,
                     recurrent=True, norm_diff=False, tanh=False)
    model.load_state_dict(state)
    model.eval()
    test = NBodyDataset(partition="test", dataset_name="nbody_small")
    loc, vel, edge_attr, _, loc_end = (torch.stack(t) for t in zip(*(test[i] for i in range(len(test)))))
    n_sims, n_nodes, _ = loc.shape
    rows, cols = test.get_edges(n_sims, n_nodes)
    loc, vel, loc_end = loc.reshape(-1, 3), vel.reshape(-1, 3), loc_end.reshape(-1, 3)
    edge_attr = edge_attr.reshape(-1, edge_attr.shape[-1])
    speed = vel.pow(2).sum(1, keepdim=True).sqrt()
    sq_dist = (loc[rows] - loc[cols]).pow(2).sum(1, keepdim=True)
    with torch.no_grad():
        pred = model(speed, loc, [rows, cols], vel, torch.cat([edge_attr, sq_dist], 1))
    mse = torch.nn.functional.mse_loss(pred, loc_end).item()
    print(f"test mse {mse:.5f}")
    return mse


if __name__ == "__main__":
    task_kit.evaluate_goal("mse", measure)
