"""The user cache of gpu2tpu: references, verified sources, prepared task trees."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """$GPU2TPU_CACHE, else $XDG_CACHE_HOME/gpu2tpu, else ~/.cache/gpu2tpu."""
    base = os.environ.get("GPU2TPU_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gpu2tpu")
    return Path(base)
