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


def why_unwritable(path: Path, exc: OSError) -> str:
    """Why `path` cannot be made: a file where a folder is needed, else the system's reason."""
    above = next((p for p in Path(path).parents if p.exists()), None)
    if above is not None and not above.is_dir():
        return f"{above} is a file, not a folder"
    return exc.strerror or str(exc)
