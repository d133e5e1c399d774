"""Goal metric for yenchenlin/nerf-pytorch: PSNR of the trained NeRF on the held-out test views.

Reads the project's own checkpoint (logs/gpu2tpu_tiny/000030.tar, written by run_nerf.py after the
last iteration: the coarse and fine networks' state_dicts), builds both networks on the CPU with
the pristine tree's create_nerf from configs/gpu2tpu_tiny.txt, loads the weights and renders the 4
test views of the stand-in scene with the project's render() and its test settings (no jitter, no
density noise, white background), as run_nerf.py's --render_test does. The value is the project's
mse2psnr of the mean squared error over every pixel of the 4 views (higher is better).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the kit beside this file (run with -P)
from task_kit import Checkpoint, GoalUnavailable, evaluate_goal  # noqa: E402

CONFIG = Path("configs") / "gpu2tpu_tiny.txt"
SCENE = Path("data") / "nerf_synthetic" / "gpu2tpu_spheres"
NEAR, FAR = 2.0, 6.0  # run_nerf.py's bounds for blender scenes


def measure(ckpt: Checkpoint) -> float:
    os.environ.setdefault("MPLBACKEND", "Agg")
    import numpy as np
    import torch
    from load_blender import load_blender_data  # the pristine, prepared tree
    from run_nerf import config_parser, create_nerf, render
    from run_nerf_helpers import img2mse, mse2psnr

    torch.set_default_device("cpu")
    with tempfile.TemporaryDirectory() as scratch:
        args = config_parser().parse_args(["--config", str(ckpt.project / CONFIG), "--basedir", scratch,
                                           "--datadir", str(ckpt.project / SCENE), "--no_reload"])
        os.makedirs(os.path.join(scratch, args.expname))
        _, kwargs, _, _, _ = create_nerf(args)
    try:
        kwargs["network_fn"].load_state_dict(ckpt.state("network_fn_state_dict", as_float=True))
        kwargs["network_fine"].load_state_dict(ckpt.state("network_fine_state_dict", as_float=True))
    except (KeyError, RuntimeError) as exc:
        raise GoalUnavailable(f"the checkpoint does not load into the coarse and fine NeRF: {exc}") from exc
    kwargs["network_fn"].eval()
    kwargs["network_fine"].eval()
    kwargs.update(near=NEAR, far=FAR)

    images, poses, _, (h, w, focal), (_, _, i_test) = load_blender_data(str(ckpt.project / SCENE), False, 1)
    images = images[..., :3] * images[..., -1:] + (1.0 - images[..., -1:])  # white_bkgd
    h, w = int(h), int(w)
    k = np.array([[focal, 0, 0.5 * w], [0, focal, 0.5 * h], [0, 0, 1]])
    errors = []
    with torch.no_grad():
        for i in i_test:
            rgb, _, _, _ = render(h, w, k, chunk=args.chunk, c2w=torch.tensor(poses[i][:3, :4]), **kwargs)
            errors.append(img2mse(rgb, torch.tensor(images[i])))
    mse = torch.stack(errors).mean()
    if not torch.isfinite(mse):
        raise GoalUnavailable(f"the rendered test views are not finite (mse {float(mse)})")
    psnr = float(mse2psnr(mse))
    print(f"held-out PSNR {psnr:.4f} dB (mse {float(mse):.6f}) over {len(i_test)} test views of {h}x{w}")
    return psnr


if __name__ == "__main__":
    evaluate_goal("psnr", measure)
