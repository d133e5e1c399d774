"""Goal metric for ikostrikov/pytorch-flows: mean log-likelihood (nats) of held-out stand-in POWER
rows under the trained MAF.

Builds the FlowSequential of MADE / BatchNormFlow / Reverse blocks as main.py does (POWER: 100
hidden units, relu) with the pristine project's flows.py, loads the trained state_dict (the
BatchNormFlow running statistics included: eval mode uses them) and scores 5000 fresh rows from
prepare.py's generator (a seed the training file does not use), given the loader's column drops
and noise and standardised with the training + validation statistics the project's loader computes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit and prepare.py (run with -P)
from prepare import rows  # noqa: E402
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

N_HELD_OUT, HELD_OUT_SEED, NUM_HIDDEN = 5000, 777, 100


def measure(ckpt: Checkpoint) -> float:
    import datasets  # the pristine, prepared tree
    import flows as fnn
    import numpy as np
    import torch
    from datasets import power

    state = {k: v.float() for k, v in ckpt.state().items()}
    blocks = sorted({int(m.group(1)) for k in state if (m := re.match(r"(\d+)\.joiner\.", k))})
    if not blocks:
        raise GoalUnavailable("no MADE blocks in the checkpoint")
    datasets.root = str(ckpt.project / "data") + "/"
    train, valid, _ = power.load_data_split_with_noise()
    fit = np.vstack((train, valid))
    mu, sd = fit.mean(axis=0), fit.std(axis=0)

    rng = np.random.RandomState(HELD_OUT_SEED)
    held = np.delete(np.delete(rows(N_HELD_OUT, HELD_OUT_SEED), 3, axis=1), 1, axis=1)
    noise = np.hstack((0.001 * rng.rand(N_HELD_OUT, 1), 0.01 * rng.rand(N_HELD_OUT, 1),
                       rng.rand(N_HELD_OUT, 3), np.zeros((N_HELD_OUT, 1))))
    x = torch.from_numpy(((held + noise - mu) / sd).astype(np.float32))

    modules: list[torch.nn.Module] = []
    for _ in blocks:  # MADE at 0, 3, 6, ...
        modules += [fnn.MADE(x.shape[1], NUM_HIDDEN, None, act="relu"), fnn.BatchNormFlow(x.shape[1]),
                    fnn.Reverse(x.shape[1])]
    model = fnn.FlowSequential(*modules)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise GoalUnavailable(f"checkpoint does not load into the MAF: {exc}") from exc
    model.eval()
    with torch.no_grad():
        value = float(model.log_probs(x).mean())
    print(f"test_log_likelihood {value:.4f}")
    return value


if __name__ == "__main__":
    evaluate_goal("test_log_likelihood", measure)
