"""The gpu2tpu corpus: project records and the Hugging Face dataset (tasks are read through
gpu2tpu.tasks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"  # the built dataset embedded in the package


def revision() -> str:
    """The corpus revision stamped into every report (content hash of the built dataset)."""
    stamp = DATA_DIR / "REVISION"
    if stamp.exists():
        return stamp.read_text().strip()
    return "unbuilt"


def load(config: str = "projects", split: str | None = None) -> Any:
    """The embedded dataset, offline: a `datasets.DatasetDict`, or a `Dataset` for one split.

    config: "projects" (splits "main", "reference_only") or "tasks" (splits "practice",
    "upstream": one row per task folder, as `gpu2tpu tasks` lists them).
    """
    from gpu2tpu.corpus.hub import load as _load

    return _load(config, split)
