"""The agent's working copy: a history-free copy of project/, path confinement, and the diff."""

from __future__ import annotations

import difflib
import fnmatch
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

# Never copied into the working copy (history could leak answers) nor part of the diff.
VCS_DIRS = (".git", ".hg", ".svn")
# Build and cache litter: left out of the diff.
IGNORED = ("__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache",
           ".ipynb_checkpoints")
MAX_DIFF_FILE_BYTES = 1_000_000


class PathRefused(Exception):
    """A tool asked for a path outside the working copy."""


def make_working_copy(project: Path, dest: Path) -> Path:
    """Copy `project` to `dest` (which must not exist) without any version-control history."""
    shutil.copytree(project, dest, symlinks=True, ignore=shutil.ignore_patterns(*VCS_DIRS))
    return dest


def confine(root: Path, path: str) -> Path:
    """Resolve `path` (relative to `root` or absolute) through symlinks; refuse escapes."""
    if not path or "\x00" in path:
        raise PathRefused(f"refused: empty or invalid path {path!r}")
    root = root.resolve()
    candidate = Path(path)
    full = candidate if candidate.is_absolute() else root / candidate
    resolved = full.resolve(strict=False)
    if resolved != root and root not in resolved.parents:
        raise PathRefused(
            f"refused: {path!r} is outside the working copy; only files of the project are "
            "reachable (use paths relative to the project root)"
        )
    rel = resolved.relative_to(root)
    if rel.parts and rel.parts[0] in VCS_DIRS:
        raise PathRefused(f"refused: {path!r} is version-control metadata")
    return resolved


def _ignored(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in VCS_DIRS for p in parts) or any(
        fnmatch.fnmatch(p, pat) for p in parts for pat in IGNORED
    )


def tree_files(root: Path) -> dict[str, Path]:
    """Relative POSIX path -> path for every regular file and symlink under `root`."""
    out: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in VCS_DIRS)
        # A symlinked directory is a single entry (a link), not a tree to descend.
        names = filenames + [d for d in dirnames if (base / d).is_symlink()]
        for name in names:
            p = base / name
            rel = p.relative_to(root).as_posix()
            if not _ignored(rel) and (p.is_symlink() or p.is_file()):
                out[rel] = p
    return out


def _mode(p: Path) -> str:
    st = p.lstat()
    if stat.S_ISLNK(st.st_mode):
        return "120000"
    return "100755" if st.st_mode & stat.S_IXUSR else "100644"


def _content(p: Path) -> bytes:
    return os.readlink(p).encode() if p.is_symlink() else p.read_bytes()


def _lines(text: str) -> list[str]:
    """Split on "\\n" only, keeping line ends (str.splitlines also splits on \\r, \\f...)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _hunks(old: list[str], new: list[str], a: str, b: str) -> list[str]:
    out: list[str] = []
    for line in difflib.unified_diff(old, new, a, b, n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


@dataclass
class Diff:
    patch: str
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why a changed file is not in the patch


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def diff_trees(original: Path, working: Path) -> Diff:
    """A unified diff (git-apply compatible, `a/` `b/` prefixes) from `original` to `working`."""
    old_files, new_files = tree_files(original), tree_files(working)
    result = Diff(patch="")
    chunks: list[str] = []
    for rel in sorted(set(old_files) | set(new_files)):
        op, np_ = old_files.get(rel), new_files.get(rel)
        old_b = _content(op) if op else b""
        new_b = _content(np_) if np_ else b""
        old_m = _mode(op) if op else None
        new_m = _mode(np_) if np_ else None
        if old_b == new_b and old_m == new_m:
            continue
        if max(len(old_b), len(new_b)) > MAX_DIFF_FILE_BYTES:
            result.skipped.append(f"{rel}: larger than {MAX_DIFF_FILE_BYTES} bytes")
            continue
        old_t, new_t = _as_text(old_b), _as_text(new_b)
        if old_t is None or new_t is None:
            result.skipped.append(f"{rel}: binary file")
            continue
        if old_m and new_m and old_m != new_m and "120000" in (old_m, new_m):
            result.skipped.append(f"{rel}: changes between a symlink and a file")
            continue
        head = [f"diff --git a/{rel} b/{rel}\n"]
        a, b = f"a/{rel}", f"b/{rel}"
        if op is None:
            head.append(f"new file mode {new_m}\n")
            a = "/dev/null"
        elif np_ is None:
            head.append(f"deleted file mode {old_m}\n")
            b = "/dev/null"
        elif old_m != new_m:
            head += [f"old mode {old_m}\n", f"new mode {new_m}\n"]
        body = _hunks(_lines(old_t), _lines(new_t), a, b) if old_t != new_t else []
        chunks.append("".join(head + body))
        result.files.append(rel)
    result.patch = "".join(chunks)
    return result
