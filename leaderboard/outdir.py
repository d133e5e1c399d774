"""Writing an output folder (export, site) whole or not at all.

Everything is written to a temporary folder beside the destination (inside it, hidden, when only
the destination itself is writable); only when that has succeeded does it take the destination's
place: one rename when the destination does not exist, else one rename per entry this command
writes (other files there, such as a Space's `.git`, stay). A failure before that leaves the old
output as it was (or none); the temporary folder is removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TypeVar

from gpu2tpu.leaderboard.paths import why_unwritable

T = TypeVar("T")


class OutputError(Exception):
    """The destination cannot be written; the message names it and what to pass instead."""


def write_whole(dest: Path, owned: Collection[str], build: Callable[[Path], T]) -> T:
    """Run `build(stage)` on an empty folder beside `dest`, then put what it wrote in place of
    `dest`'s entries named in `owned` (those `build` did not write again are removed too)."""
    dest = Path(dest).expanduser().resolve()  # a symlinked folder: stage beside the real one
    if dest.exists() and not dest.is_dir():
        raise OutputError(f"{dest} is a file; pass --to a folder (new or an earlier output)")
    stage = _stage(dest)
    try:
        result = build(stage)
        if not dest.exists():
            stage.rename(dest)  # the whole folder appears at once
            return result
        _swap(stage, dest, owned)
        return result
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _stage(dest: Path) -> Path:
    """An empty folder on dest's file system: beside it, else (an existing folder whose parent
    is not writable, such as `--to .` in a home directory) inside it, hidden."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {dest}: {why_unwritable(dest, exc)}; pass --to a folder "
                          "you can write") from None
    error: OSError | None = None
    for where in (dest.parent, dest):
        try:
            stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=where))
            stage.chmod(0o777 & ~_umask())  # as mkdir would make it (mkdtemp: owner only)
            return stage
        except OSError as exc:
            error = error or exc
    assert error is not None
    raise OutputError(f"cannot write {dest}: {why_unwritable(dest, error)}; pass --to a folder "
                      "you can write") from None


def _swap(stage: Path, dest: Path, owned: Collection[str]) -> None:
    """Replace dest's owned entries with stage's, by renames; undone if one fails."""
    old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=stage.parent))
    moved: list[str] = []
    placed: list[str] = []
    try:
        for name in sorted(set(owned) | {p.name for p in stage.iterdir()}):
            if (dest / name).exists() or (dest / name).is_symlink():
                (dest / name).rename(old / name)
                moved.append(name)
        for entry in sorted(stage.iterdir()):
            entry.rename(dest / entry.name)
            placed.append(entry.name)
    except OSError as exc:
        for name in placed:
            _remove(dest / name)
        for name in moved:
            (old / name).rename(dest / name)
        raise OutputError(f"cannot replace the output in {dest}: {exc.strerror or exc}; the "
                          "earlier output is as it was") from None
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
