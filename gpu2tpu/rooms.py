"""The grading code's rooms, and the keys that say what an edit costs.

- `record/`, `sandbox/` and the task machinery (the `tasks` package's own modules, not the task
  folders beside them) produce evidence: the recorder hash. An edit there re-runs what was
  recorded (reference bundles, kept labelled runs, validation records).
- `judge/` holds pure functions over recorded files: the judge hash. An edit there re-grades kept
  evidence and runs nothing.
- `harness/` (front ends, engines, the reference store) and everything else are never keyed.

Each key is a tree hash of its folders' own files (names and bytes; bytecode caches live in
subfolders and never count), with no list of exceptions: where a module goes decides what editing
it costs.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RECORDER_PACKAGES = ("record", "sandbox", "tasks")
JUDGE_PACKAGES = ("judge",)


def package_folder(name: str) -> Path:
    """The folder an installed `gpu2tpu.<name>` package lives in (editable or not)."""
    import importlib.util

    found = importlib.util.find_spec(f"gpu2tpu.{name}")
    if found is None or found.origin is None:
        raise ModuleNotFoundError(f"gpu2tpu.{name} is not installed")
    return Path(found.origin).resolve().parent


def room_files(names: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(`<package>/<file>`, path) of every file directly in each package's folder, sorted."""
    out = []
    for name in names:
        folder = package_folder(name)
        out += [(f"{name}/{p.name}", p) for p in sorted(folder.iterdir()) if p.is_file()]
    return out


def tree_hash(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for rel, path in files:
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@cache
def recorder_hash() -> str:
    """The key of everything that produces evidence (read once per process: the code a process
    runs does not change under it)."""
    return tree_hash(room_files(RECORDER_PACKAGES))


@cache
def judge_hash() -> str:
    """The key of the pure functions that turn evidence into verdicts."""
    return tree_hash(room_files(JUDGE_PACKAGES))
