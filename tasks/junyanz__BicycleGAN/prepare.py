"""Stand-in edges2shoes for junyanz/BicycleGAN: small aligned A|B pairs of edge maps and filled shapes.

The project's aligned dataset (data/aligned_dataset.py) reads every image under <dataroot>/<phase>
as one picture holding A on its left half and B on its right half. The real edges2shoes needs a
download; this writes pairs of the same layout whose B is learnable from A:

- each picture is 128 x 256 (A and B 128 x 128 each, the size unet_128 and the 128 encoders take);
- A (the edge map, read as one grey channel with --input_nc 1): white paper, the black outlines
  (2 pixels) of one or two shapes (disc, square or diamond) of random size and place;
- B (the "photo", RGB): the same shapes filled, each with a colour drawn from a small palette (the
  multimodal part, which the latent code z is meant to carry), their outlines darkened;
- datasets/gpu2tpu_shapes/train: 8 pairs (what train.py reads, --phase train);
- datasets/gpu2tpu_shapes/val: 16 other pairs for evaluate.py (held out).

PNG files written with the standard library (zlib), deterministic (numpy seeds 0 and 1).
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import prepare_main, require  # noqa: E402

SIDE = 128
DATA = Path("datasets") / "gpu2tpu_shapes"
SPLITS = {"train": (8, 0), "val": (16, 1)}  # split: (pairs, seed)
PALETTE = [(200, 40, 40), (40, 90, 200), (40, 160, 60), (220, 170, 30), (130, 60, 170)]


def png(path: Path, rgb) -> None:
    """Writes an (h, w, 3) uint8 array as an 8-bit RGB PNG."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                     + chunk(b"IEND", b""))


def shape_mask(rng, yy, xx):
    kind = int(rng.integers(0, 3))
    r = float(rng.uniform(14, 34))
    cy, cx = rng.uniform(r + 4, SIDE - r - 4, size=2)
    dy, dx = yy - cy, xx - cx
    if kind == 0:
        return dy * dy + dx * dx <= r * r
    if kind == 1:
        return (abs(dy) <= r * 0.85) & (abs(dx) <= r * 0.85)
    return abs(dy) + abs(dx) <= r * 1.2


def outline(mask):
    import numpy as np

    inner = mask.copy()
    for shift in (1, 2):  # eroded twice: a 2-pixel outline
        for axis in (0, 1):
            for sign in (1, -1):
                inner &= np.roll(mask, sign * shift, axis=axis)
    return mask & ~inner


def pair(rng):
    import numpy as np

    yy, xx = np.mgrid[0:SIDE, 0:SIDE].astype(np.float64)
    edges = np.full((SIDE, SIDE, 3), 255, np.uint8)
    photo = np.full((SIDE, SIDE, 3), 255, np.uint8)
    for _ in range(int(rng.integers(1, 3))):
        mask = shape_mask(rng, yy, xx)
        line = outline(mask)
        colour = np.array(PALETTE[int(rng.integers(0, len(PALETTE)))], np.uint8)
        photo[mask] = colour
        photo[line] = (colour * 0.5).astype(np.uint8)
        edges[line] = 0
    return np.concatenate([edges, photo], axis=1)


def write(root: Path) -> None:
    import numpy as np

    require(root, "train.py", "data/aligned_dataset.py")
    for split, (n, seed) in SPLITS.items():
        folder = root / DATA / split
        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        for i in range(n):
            png(folder / f"{i + 1}_AB.png", pair(rng))


if __name__ == "__main__":
    prepare_main(write, "junyanz/BicycleGAN")
