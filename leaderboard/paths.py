"""Where the store lives (no heavy imports: the CLI reads this at start-up)."""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "GPU2TPU_DB"


def default_db_path() -> Path:
    """`$GPU2TPU_DB`, else the user cache: `~/.cache/gpu2tpu/leaderboard.duckdb`."""
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "gpu2tpu" / "leaderboard.duckdb"
