"""Goal metric for clovaai/aasist: the countermeasure's equal error rate (EER, %, as main.py
reports it) on held-out stand-in trials.

200 trials (100 bona fide, 100 spoof) drawn by prepare.py's own generator with a seed of their own,
cut to the clip length the launcher gives the loaders (the first CUT samples, as data_utils.pad
does for evaluation). The model is AASIST built from the pristine tree's stand-in configuration,
in eval mode (dropout off, BatchNorm running statistics); the score is the bona fide logit, as
main.py's produce_evaluation_file takes it, and the EER is the project's compute_eer.
"""

from __future__ import annotations

from task_kit import Checkpoint, GoalUnavailable, evaluate_goal

HELD_OUT_SEED, PER_CLASS = 21, 100


def measure(ckpt: Checkpoint) -> float:
    import json

    import numpy as np
    import torch
    from evaluation import compute_eer
    from models.AASIST import Model
    from prepare import CONFIG, CUT, clip

    state = ckpt.state()
    if "out_layer.weight" not in state:
        raise GoalUnavailable("the checkpoint holds no AASIST output layer")
    config = json.loads((ckpt.project / CONFIG).read_text())
    model = Model(config["model_config"])
    model.load_state_dict(state)
    model.eval()
    rng = np.random.default_rng(HELD_OUT_SEED)
    spoof = [False] * PER_CLASS + [True] * PER_CLASS
    x = torch.tensor(np.stack([clip(rng, s)[:CUT] for s in spoof]), dtype=torch.float32)
    with torch.no_grad():
        scores = model(x)[1][:, 1].numpy().astype(np.float64)
    if not np.isfinite(scores).all():
        raise GoalUnavailable("the model's scores are not finite")
    labels = np.array(spoof)
    return float(compute_eer(scores[~labels], scores[labels])[0] * 100)


if __name__ == "__main__":
    evaluate_goal("eer_percent", measure)
