"""Goal metric for sfujim/TD3_BC: the D4RL-style normalised score of the trained actor on the
stand-in point-mass environment, over 20 episodes with fixed seeds (deterministic policy, as the
project's eval_policy), with the observation normalisation main.py derives from the data set.

The Actor is built with the pristine project's TD3_BC.py; the checkpoint is the actor state_dict
main.py saves (--save_model); the environment and the data set are the prepared tree's stand-ins.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this copy (run with -P)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

ENV, EPISODES, FIRST_SEED = "reach-medium-v0", 20, 10_000


def measure(ckpt: Checkpoint) -> float:
    import d4rl  # the prepared tree's stand-ins (d4rl registers the environment with gym)
    import gym
    import numpy as np
    import torch
    from TD3_BC import Actor

    env = gym.make(ENV)
    data = d4rl.qlearning_dataset(env)
    mean = data["observations"].mean(0, keepdims=True)
    std = data["observations"].std(0, keepdims=True) + 1e-3  # ReplayBuffer.normalize_states
    actor = Actor(env.observation_space.shape[0], env.action_space.shape[0],
                  float(env.action_space.high[0]))
    try:
        actor.load_state_dict({k: v.float() for k, v in ckpt.state().items()})
    except RuntimeError as exc:
        raise GoalUnavailable(f"checkpoint does not load into the Actor: {exc}") from exc
    actor.eval()
    total = 0.0
    with torch.no_grad():
        for episode in range(EPISODES):
            env.seed(FIRST_SEED + episode)
            state, done = env.reset(), False
            while not done:
                x = torch.as_tensor((np.array(state).reshape(1, -1) - mean) / std, dtype=torch.float32)
                state, reward, done, _ = env.step(actor(x).numpy().flatten())
                total += reward
    score = 100.0 * env.get_normalized_score(total / EPISODES)
    print(f"d4rl_score {score:.2f}")
    return score


if __name__ == "__main__":
    evaluate_goal("d4rl_score", measure)
