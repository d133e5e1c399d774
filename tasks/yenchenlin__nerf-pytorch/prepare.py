"""Stand-in Blender scene, a tiny config and a launcher for yenchenlin/nerf-pytorch.

load_blender.py reads `<datadir>/transforms_{train,val,test}.json` (`camera_angle_x` and one frame
per view: `file_path` without the `.png`, a 4x4 camera-to-world `transform_matrix`) and the RGBA
PNGs they name. The real scenes (lego, ...) are a download of 800x800 renders. This writes a scene
of the same layout, rendered here analytically at SIDE x SIDE pixels: a unit sphere at the origin
whose colour varies smoothly over its surface, with a smaller sphere of another colour in front of
it, on a transparent background (alpha 0; the config's white_bkgd composites it on white). The
cameras sit on a sphere of radius 4 looking at the origin, as in the Blender scenes (near 2, far 6):
10 training, 2 validation and 4 held-out test views at other azimuths. 2x2 samples per pixel.

configs/gpu2tpu_tiny.txt: the lego config's choices (blender, view directions, white background,
hierarchical sampling with a fine network) at a CPU's size: 4 x 64 networks, 16 coarse and 16
fine samples per ray, 800 random rays per step from the 4000 shuffled training rays (the project's
default random ray batching; 800 divides 4000, so every batch has the same shape and an epoch is 5
steps), positional encodings of 6 and 2 octaves, a checkpoint after the last iteration (no test-set
render or video inside the 30 iterations).

gpu2tpu_nerf.py (harness-owned launcher): run_nerf.py hard-codes its horizon,
`trange(start, N_iters)` with N_iters = 200000 + 1, and has no flag for it. The launcher gives tqdm
a `trange` that ends that one loop after ITERS iterations (every other call is tqdm's own), selects
matplotlib's non-interactive backend, then runs the script unchanged.

Deterministic (no random draws).
"""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from pathlib import Path

# the harness runs this with `python -P` (no script directory on sys.path): the kit beside it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task_kit import prepare_main, require  # noqa: E402

SIDE, ANGLE_X, RADIUS = 20, 0.69, 4.0
SCENE = Path("data") / "nerf_synthetic" / "gpu2tpu_spheres"
CONFIG = Path("configs") / "gpu2tpu_tiny.txt"
ITERS = 30
LAUNCHER = "gpu2tpu_nerf.py"
# (azimuth, elevation) in degrees for each split
VIEWS = {
    "train": list(zip(range(-180, 180, 36), [-30, -15, -40, -20, -35, -25, -10, -30, -45, -20])),
    "val": [(-150, -25), (70, -30)],
    "test": [(-100, -30), (10, -20), (125, -35), (160, -15)],
}
# spheres: centre, radius, base colour
SPHERES = [((0.0, 0.0, 0.0), 1.0, (0.9, 0.35, 0.2)), ((0.6, 0.7, 0.9), 0.45, (0.15, 0.45, 0.9))]

CONFIG_TEXT = f"""\
expname = gpu2tpu_tiny
basedir = ./logs
datadir = ./{SCENE.as_posix()}
dataset_type = blender
testskip = 1

use_viewdirs = True
white_bkgd = True
lrate = 5e-3
lrate_decay = 500

netdepth = 4
netwidth = 64
netdepth_fine = 4
netwidth_fine = 64
multires = 6
multires_views = 2
N_samples = 16
N_importance = 16
N_rand = 800

i_print = 10
i_weights = {ITERS}
i_testset = 1000000
i_video = 1000000
"""

LAUNCHER_TEXT = f'''"""Harness-owned launcher (written by the task's prepare.py; do not edit).

python {LAUNCHER} run_nerf.py ARGS...: run_nerf.py runs unchanged, except that its training loop,
`trange(start, N_iters)` with the hard-coded N_iters = 200000 + 1, ends after iteration {ITERS}
(every other trange call is tqdm's own), and matplotlib draws off screen.
"""
import os
import runpy
import sys

os.environ["MPLBACKEND"] = "Agg"

import tqdm  # noqa: E402

ITERS = {ITERS}
_trange = tqdm.trange


def trange(*args, **kwargs):
    if len(args) == 2 and args[1] == 200000 + 1:
        args = (args[0], ITERS + 1)
    return _trange(*args, **kwargs)


tqdm.trange = trange
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def camera(azimuth: float, elevation: float) -> list[list[float]]:
    """Camera-to-world matrix (OpenGL axes: the camera looks down its -z) on the sphere of RADIUS."""
    import numpy as np

    az, el = np.radians(azimuth), np.radians(elevation)
    eye = RADIUS * np.array([np.cos(el) * np.sin(az), -np.cos(el) * np.cos(az), -np.sin(el)])
    back = eye / np.linalg.norm(eye)  # camera +z points away from the origin
    right = np.cross([0.0, 0.0, 1.0], back)
    right /= np.linalg.norm(right)
    up = np.cross(back, right)
    c2w = np.eye(4)
    c2w[:3, 0], c2w[:3, 1], c2w[:3, 2], c2w[:3, 3] = right, up, back, eye
    return [[float(v) for v in row] for row in c2w]


def render(c2w: list[list[float]]):
    """RGBA uint8 (SIDE, SIDE, 4): the spheres' colour where a ray hits, alpha their coverage."""
    import numpy as np

    m = np.array(c2w)
    focal = 0.5 * SIDE / np.tan(0.5 * ANGLE_X)
    sub = (np.arange(2 * SIDE) + 0.5) / 2.0  # 2x2 samples per pixel
    u, v = np.meshgrid(sub, sub)  # u: column, v: row
    dirs = np.stack([(u - 0.5 * SIDE) / focal, -(v - 0.5 * SIDE) / focal, -np.ones_like(u)], -1)
    d = dirs @ m[:3, :3].T
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    o = m[:3, 3]
    best = np.full(d.shape[:2], np.inf)
    rgb = np.zeros(d.shape[:2] + (3,))
    for centre, radius, colour in SPHERES:
        oc = o - np.array(centre)
        b = d @ oc
        disc = b * b - (oc @ oc - radius * radius)
        t = np.where(disc > 0, -b - np.sqrt(np.maximum(disc, 0.0)), np.inf)
        hit = (t > 0) & (t < best)
        p = o + t[..., None] * d
        n = (p - np.array(centre)) / radius
        shade = np.array(colour) * (0.55 + 0.45 * n[..., 2:3]) + 0.25 * (0.5 + 0.5 * n)
        rgb = np.where(hit[..., None], np.clip(shade, 0.0, 1.0), rgb)
        best = np.where(hit, t, best)
    alpha = np.isfinite(best).astype(float)
    rgba = np.concatenate([rgb, alpha[..., None]], -1).reshape(SIDE, 2, SIDE, 2, 4).mean((1, 3))
    # premultiplied samples averaged: store straight colour where partly covered
    cover = np.maximum(rgba[..., 3:], 1e-6)
    rgba[..., :3] = np.where(rgba[..., 3:] > 0, rgba[..., :3] / cover, 0.0)
    return np.clip(np.rint(rgba * 255), 0, 255).astype(np.uint8)


def png(pixels) -> bytes:
    """An 8-bit RGBA PNG (no filter)."""
    h, w, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write(root: Path) -> None:
    require(root, "run_nerf.py", "load_blender.py", "configs/lego.txt")
    scene = root / SCENE
    for split, views in VIEWS.items():
        (scene / split).mkdir(parents=True, exist_ok=True)
        frames = []
        for k, (azimuth, elevation) in enumerate(views):
            c2w = camera(azimuth, elevation)
            (scene / split / f"r_{k}.png").write_bytes(png(render(c2w)))
            frames.append({"file_path": f"./{split}/r_{k}", "rotation": 0.0, "transform_matrix": c2w})
        meta = {"camera_angle_x": ANGLE_X, "frames": frames}
        (scene / f"transforms_{split}.json").write_text(json.dumps(meta, indent=2))
    (root / CONFIG).write_text(CONFIG_TEXT)
    (root / LAUNCHER).write_text(LAUNCHER_TEXT)


if __name__ == "__main__":
    prepare_main(write, "yenchenlin/nerf-pytorch")
