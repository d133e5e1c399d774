"""Stand-in ModelNet40 for fxia22/pointnet.pytorch: synthetic point clouds in .ply files.

Writes data/modelnet_standin/ in the layout pointnet/dataset.py's ModelNetDataset reads: a split
file per split (trainval.txt, test.txt, heldout.txt) listing `<class>/<name>.ply`, each an ASCII
PLY with a `vertex` element of float x, y, z (read with plyfile). The class is the folder name,
looked up in the project's own misc/modelnet_id.txt (40 ModelNet classes): four of them get a
shape each, points sampled on its surface with noise at a random size and aspect: a sphere
(`bowl`), a cube (`xbox`), an upright cylinder (`bottle`) and an upright cone (`cone`). 64
training clouds (16 per class), 32 test clouds (the script's in-loop and final test passes) and
128 held-out clouds (evaluate.py only). Deterministic (numpy generators with fixed seeds).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the kit (run with -I)
from task_kit import prepare_main  # noqa: E402

BASE = Path("data") / "modelnet_standin"
CLASSES = ["bowl", "xbox", "bottle", "cone"]
SPLITS = {"trainval": (64, 11), "test": (32, 12), "heldout": (128, 13)}
POINTS_PER_CLOUD = 512


def sample_shape(kind: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n points on the surface of shape `kind` (an index into CLASSES), with noise; (n, 3)."""
    if kind == 0:  # sphere
        p = rng.normal(size=(n, 3))
        p /= np.linalg.norm(p, axis=1, keepdims=True)
    elif kind == 1:  # cube: a random face, a uniform point on it
        p = rng.uniform(-1, 1, size=(n, 3))
        axis = rng.integers(0, 3, size=n)
        p[np.arange(n), axis] = rng.choice([-1.0, 1.0], size=n)
    elif kind == 2:  # upright cylinder (axis y), side and caps
        theta = rng.uniform(0, 2 * np.pi, size=n)
        y = rng.uniform(-1.5, 1.5, size=n)
        r = np.ones(n)
        cap = rng.uniform(size=n) < 0.2
        y[cap] = rng.choice([-1.5, 1.5], size=int(cap.sum()))
        r[cap] = np.sqrt(rng.uniform(size=int(cap.sum())))
        p = np.stack([r * np.cos(theta), y, r * np.sin(theta)], axis=1)
    else:  # upright cone, apex up
        theta = rng.uniform(0, 2 * np.pi, size=n)
        h = np.sqrt(rng.uniform(size=n))  # uniform on the lateral surface
        p = np.stack([h * np.cos(theta), 1.0 - 2.0 * h, h * np.sin(theta)], axis=1)
    p *= rng.uniform(0.7, 1.3) * rng.uniform(0.85, 1.15, size=(1, 3))
    p += rng.normal(0, 0.02, size=p.shape)
    return p.astype(np.float32)


def ply_text(points: np.ndarray) -> str:
    head = ["ply", "format ascii 1.0", f"element vertex {len(points)}", "property float x",
            "property float y", "property float z", "end_header"]
    return "\n".join(head + [f"{x:.6f} {y:.6f} {z:.6f}" for x, y, z in points]) + "\n"


def write(root: Path) -> None:
    base = root / BASE
    for name in CLASSES:
        (base / name).mkdir(parents=True, exist_ok=True)
    for split, (count, seed) in SPLITS.items():
        rng = np.random.default_rng(seed)
        lines = []
        for i in range(count):
            kind = i % len(CLASSES)
            rel = f"{CLASSES[kind]}/{CLASSES[kind]}_{split}_{i:04d}.ply"
            (base / rel).write_text(ply_text(sample_shape(kind, POINTS_PER_CLOUD, rng)))
            lines.append(rel)
        (base / f"{split}.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    prepare_main(write, "fxia22/pointnet.pytorch")
