"""Harness-owned goal metric for vwxyzjn/cleanrl's PPO: mean episodic return of the trained agent
on CartPole-v1, acting greedily (the most likely action), over 10 episodes with fixed seeds.

The Agent is built with the pristine project at --project (cleanrl/ppo.py imported as a module:
its training runs only under __main__), the trained state_dict is loaded from --checkpoint, and
the value is written to --out.
"""

from __future__ import annotations

import os
import sys

import task_kit
import torch

EPISODES, FIRST_SEED = 10, 10_000


def measure(ckpt: task_kit.Checkpoint) -> float:
    sys.path.insert(0, os.path.join(ckpt.project, "cleanrl"))
    import gymnasium as gym
    import ppo  # the pristine, verified tree

    envs = gym.vector.SyncVectorEnv([ppo.make_env("CartPole-v1", 0, False, "evaluate")])
    agent = ppo.Agent(envs)
    agent.load_state_dict(ckpt.state(as_float=True))
    agent.eval()
    env = gym.make("CartPole-v1")
    returns = []
    with torch.no_grad():
        for episode in range(EPISODES):
            obs, _ = env.reset(seed=FIRST_SEED + episode)
            total, done = 0.0, False
            while not done:
                logits = agent.actor(torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0))
                obs, reward, terminated, truncated, _ = env.step(int(logits.argmax(dim=1)))
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
    value = sum(returns) / len(returns)
    print(f"episodic_return {value:.1f} ({returns})")
    return value


if __name__ == "__main__":
    task_kit.evaluate_goal("episodic_return", measure)
