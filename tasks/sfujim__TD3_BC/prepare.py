"""Stand-in D4RL for sfujim/TD3_BC: `gym` and `d4rl` packages with the interface main.py uses, and
an offline data set for them (d4rl and MuJoCo cannot be installed here).

main.py calls gym.make(name) (old gym API: env.seed, env.reset() -> obs, env.step(a) -> (obs,
reward, done, info), observation_space.shape, action_space.shape / .high / .seed,
env.get_normalized_score) and d4rl.qlearning_dataset(env) (observations, actions,
next_observations, rewards, terminals). The stand-in environment, `reach-medium-v0`, is a point
mass on a plane that must reach a goal: observation (position, velocity, goal), 6 floats; action a
2-d force in [-1, 1]; 50 steps an episode, reward 1 - distance - 0.1 |a|^2, each step. The data set
holds 200 episodes (10000 transitions) of a "medium" behaviour policy: a weak, noisy controller
that sometimes acts at random. The normalised score uses the returns of a uniformly random policy
(0) and of a tuned controller (100), computed here once. Everything is harness-owned (prepare.outputs)
and deterministic (numpy seeds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this copy (run with -P)
from task_kit import prepare_main  # noqa: E402

ENV = "reach-medium-v0"
EPISODES, REFERENCE_EPISODES = 200, 100

GYM = '''"""Stand-in gym (harness-owned, written by the task's prepare.py; do not edit): the few names
sfujim/TD3_BC uses, with the old gym API (env.seed, reset() -> obs, step() -> 4-tuple)."""
import numpy as np

_REGISTRY = {}


class Box:
    def __init__(self, low, high, shape):
        self.low = np.full(shape, low, dtype=np.float32)
        self.high = np.full(shape, high, dtype=np.float32)
        self.shape = tuple(shape)
        self._rng = np.random.RandomState(0)

    def seed(self, seed=None):
        self._rng = np.random.RandomState(seed)
        return [seed]

    def sample(self):
        return self._rng.uniform(self.low, self.high).astype(np.float32)


class spaces:  # gym.spaces.Box
    Box = Box


def register(id, entry_point):
    _REGISTRY[id] = entry_point


def make(id):
    if id not in _REGISTRY:
        raise KeyError(f"stand-in gym: no environment {id!r} (registered: {sorted(_REGISTRY)})")
    return _REGISTRY[id]()
'''

D4RL = '''"""Stand-in d4rl (harness-owned, written by the task's prepare.py; do not edit): registers the
point-mass environment {env!r} with the stand-in gym and serves its offline data set."""
import os

import gym
import numpy as np

HORIZON = 50
RANDOM_RETURN, EXPERT_RETURN = {random_return!r}, {expert_return!r}
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "{env}.npz")


class ReachEnv:
    """Point mass on a plane: observation (x, y, vx, vy, goal x, goal y), action a force in [-1, 1]^2."""

    def __init__(self):
        self.observation_space = gym.Box(-np.inf, np.inf, (6,))
        self.action_space = gym.Box(-1.0, 1.0, (2,))
        self._rng = np.random.RandomState(0)
        self.reset()

    def seed(self, seed=None):
        self._rng = np.random.RandomState(seed)
        return [seed]

    def _obs(self):
        return np.concatenate([self.pos, self.vel, self.goal]).astype(np.float32)

    def reset(self):
        self.pos = self._rng.uniform(-1.0, 1.0, 2)
        self.goal = self._rng.uniform(-1.0, 1.0, 2)
        self.vel = np.zeros(2)
        self.t = 0
        return self._obs()

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        self.vel = 0.8 * self.vel + 0.3 * a
        self.pos = np.clip(self.pos + 0.2 * self.vel, -2.0, 2.0)
        self.t += 1
        reward = 1.0 - float(np.linalg.norm(self.pos - self.goal)) - 0.1 * float(a @ a)
        return self._obs(), reward, self.t >= HORIZON, {{}}

    def get_normalized_score(self, score):
        return (score - RANDOM_RETURN) / (EXPERT_RETURN - RANDOM_RETURN)


gym.register("{env}", ReachEnv)


def qlearning_dataset(env):
    """The offline transitions, as D4RL returns them (episodes end by time-out: terminals 0)."""
    with np.load(DATA) as data:
        return {{k: data[k] for k in data.files}}
'''


def controller(obs: np.ndarray, kp: float, kd: float) -> np.ndarray:
    return np.clip(kp * (obs[4:6] - obs[0:2]) - kd * obs[2:4], -1.0, 1.0)


def episodes(env_cls, policy, n: int, seed: int) -> tuple[list[list], float]:
    """Roll out `policy(obs, rng)` for n episodes: the transitions and the mean return."""
    env = env_cls()
    env.seed(seed)
    rng = np.random.RandomState(seed + 1)
    runs, total = [], 0.0
    for _ in range(n):
        obs, done, steps = env.reset(), False, []
        while not done:
            action = policy(obs, rng)
            nxt, reward, done, _ = env.step(action)
            steps.append((obs, action, nxt, reward))
            total += reward
            obs = nxt
        runs.append(steps)
    return runs, total / n


def write(root: Path) -> None:
    (root / "gym").mkdir(exist_ok=True)
    (root / "gym" / "__init__.py").write_text(GYM)
    (root / "d4rl").mkdir(exist_ok=True)
    namespace: dict = {"__file__": str(root / "d4rl" / "__init__.py")}
    sys.path.insert(0, str(root))
    try:
        import gym  # the stand-in just written

        exec(D4RL.format(env=ENV, random_return=0.0, expert_return=1.0), namespace)
        env_cls = namespace["ReachEnv"]
        _, random_return = episodes(env_cls, lambda o, rng: rng.uniform(-1, 1, 2), REFERENCE_EPISODES, 1)
        _, expert_return = episodes(env_cls, lambda o, rng: controller(o, 2.0, 1.0), REFERENCE_EPISODES, 2)

        def medium(obs: np.ndarray, rng: np.random.RandomState) -> np.ndarray:
            if rng.rand() < 0.2:
                return rng.uniform(-1.0, 1.0, 2)
            return np.clip(controller(obs, 0.8, 0.2) + rng.normal(0.0, 0.3, 2), -1.0, 1.0)

        runs, _ = episodes(env_cls, medium, EPISODES, 3)
        del gym, sys.modules["gym"]
    finally:
        sys.path.remove(str(root))
    (root / "d4rl" / "__init__.py").write_text(
        D4RL.format(env=ENV, random_return=round(random_return, 4), expert_return=round(expert_return, 4)))
    flat = [step for run in runs for step in run]
    np.savez(root / "d4rl" / f"{ENV}.npz",
             observations=np.array([s[0] for s in flat], dtype=np.float32),
             actions=np.array([s[1] for s in flat], dtype=np.float32),
             next_observations=np.array([s[2] for s in flat], dtype=np.float32),
             rewards=np.array([s[3] for s in flat], dtype=np.float32),
             terminals=np.zeros(len(flat), dtype=bool))


if __name__ == "__main__":
    prepare_main(write, "sfujim/TD3_BC")
