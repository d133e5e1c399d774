"""Stand-in "nbody_small" data for vgsatorras/egnn (n_body_system/dataset/*.npy).

The real files come from the project's own simulator (generate_dataset.py --sufix small, 5 charged
particles). This writes the same arrays, smaller, from our own vectorised simulation of the same
system (charges +-1, Coulomb forces, leapfrog with dt 0.001, a box with elastic walls, sampled every
100 steps): loc/vel (N, 41, 3, 5), edges (N, 5, 5) = charge products, charges (N, 5, 1);
train 500, valid 100, test 200 simulations. Deterministic (numpy seed 43).
Usage: python prepare.py ROOT
"""
from pathlib import Path

import numpy as np
import task_kit

N_BALLS, FRAMES, SAMPLE_FREQ, DT, BOX = 5, 41, 100, 0.001, 5.0
SPLITS = {"train": 500, "valid": 100, "test": 200}


def simulate(rng: np.random.RandomState, n: int):
    charges = rng.choice([-1.0, 1.0], size=(n, N_BALLS, 1))
    edges = charges @ charges.transpose(0, 2, 1)
    loc = rng.randn(n, 3, N_BALLS)
    vel = rng.randn(n, 3, N_BALLS)
    vel *= 0.5 / np.sqrt((vel ** 2).sum(axis=1, keepdims=True))
    out_loc = np.zeros((n, FRAMES, 3, N_BALLS))
    out_vel = np.zeros((n, FRAMES, 3, N_BALLS))
    eye = np.eye(N_BALLS, dtype=bool)

    def forces(x):
        diff = x[:, :, :, None] - x[:, :, None, :]                  # (n, 3, i, j)
        dist3 = np.where(eye, 1.0, ((diff ** 2).sum(axis=1)) ** 1.5)
        size = np.where(eye, 0.0, edges / dist3)                     # (n, i, j)
        return np.clip((size[:, None] * diff).sum(axis=-1), -100.0, 100.0)

    def clamp(x, v):
        over, under = x > BOX, x < -BOX
        x = np.where(over, 2 * BOX - x, np.where(under, -2 * BOX - x, x))
        v = np.where(over, -np.abs(v), np.where(under, np.abs(v), v))
        return x, v

    loc, vel = clamp(loc, vel)
    for step in range(FRAMES * SAMPLE_FREQ):
        if step % SAMPLE_FREQ == 0:
            out_loc[:, step // SAMPLE_FREQ], out_vel[:, step // SAMPLE_FREQ] = loc, vel
        vel = vel + DT * forces(loc)
        loc, vel = clamp(loc + DT * vel, vel)
    return out_loc, out_vel, edges, charges


def write(root: Path) -> None:
    rng = np.random.RandomState(43)
    out = root / "n_body_system" / "dataset"
    out.mkdir(parents=True, exist_ok=True)
    for split, n in SPLITS.items():
        loc, vel, edges, charges = simulate(rng, n)
        suffix = f"{split}_charged5_initvel1small.npy"
        np.save(out / f"loc_{suffix}", loc)
        np.save(out / f"vel_{suffix}", vel)
        np.save(out / f"edges_{suffix}", edges)
        np.save(out / f"charges_{suffix}", charges)


if __name__ == "__main__":
    task_kit.prepare_main(write, "vgsatorras/egnn")
