"""Harness-owned goal metric for vwxyzjn/cleanrl's PPO: mean episodic return of the trained agent
on CartPole-v1, acting greedily (the most likely action), over 10 episodes with fixed seeds.

The Agent is built with the pristine project at --project (cleanrl/ppo.py imported as a module:
its training runs only under __main__), the trained state_dict is loaded from --checkpoint, and
the value is written to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

EPISODES, FIRST_SEED = 10, 10_000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.project, "cleanrl"))
    import gymnasium as gym
    import ppo  # the pristine, verified tree

    envs = gym.vector.SyncVectorEnv([ppo.make_env("CartPole-v1", 0, False, "evaluate")])
    agent = ppo.Agent(envs)
    state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    agent.load_state_dict({k.removeprefix("module."): v.float() for k, v in state.items()})
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
    with open(args.out, "w") as fh:
        json.dump({"schema_version": 1, "metric": "episodic_return", "value": value}, fh)
    print(f"episodic_return {value:.1f} ({returns})")


if __name__ == "__main__":
    main()
