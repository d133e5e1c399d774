"""The gpu2tpu corpus: project records, practice tasks, and the Hugging Face dataset."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
TASKS_DIR = PACKAGE_DIR / "tasks"


def revision() -> str:
    """The corpus revision stamped into every report (content hash of the built dataset)."""
    stamp = PACKAGE_DIR / "data" / "REVISION"
    if stamp.exists():
        return stamp.read_text().strip()
    return "unbuilt"
