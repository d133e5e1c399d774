"""Read a repository's files at one commit without running anything.

Two sources share one small interface: a git directory (bare, as `fetch` brings snapshots, or a
checkout's `.git`) read through `git ls-tree` and one `git cat-file --batch` process, and a plain
directory read from disk.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

# git must never try to reach a remote for an absent blob (snapshots omit files of 4 MiB or more).
_GIT_ENV = {**os.environ, "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


class SourceError(Exception):
    """The path is not a readable repository, or the commit is not in it."""


@dataclass(frozen=True)
class Entry:
    """One file of the tree: its path, size in bytes (-1: unknown/absent), a key to read it."""

    path: str
    size: int
    key: str


class RepoSource:
    """A repository tree at one commit."""

    commit: str | None = None
    commit_date: str | None = None
    origin: str | None = None

    def entries(self) -> list[Entry]:
        raise NotImplementedError

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, bytes | None]]:
        """Yield (entry, bytes) in order; bytes is None when the blob is absent."""
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (nothing by default)."""


def find_git_dir(path: Path) -> Path | None:
    """The git directory at or inside `path` (bare repo, `.git`, or `repo/` as fetch lays out)."""
    for cand in (path, path / ".git", path / "repo", path / "repo" / ".git"):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def _git(git_dir: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        env=_GIT_ENV,
        check=False,
    )
    if proc.returncode != 0:
        raise SourceError(f"git {' '.join(args)} failed in {git_dir}: {proc.stderr.strip()}")
    return proc.stdout


class GitSource(RepoSource):
    """Files of one commit in a git directory, read through git plumbing only."""

    def __init__(self, git_dir: Path, commit: str | None = None) -> None:
        self.git_dir = git_dir
        rev = commit or "HEAD"
        try:
            self.commit = _git(git_dir, "rev-parse", "--verify", "--quiet",
                               f"{rev}^{{commit}}").strip()
        except SourceError as exc:
            raise SourceError(f"commit {rev} not found in {git_dir}") from exc
        if not self.commit:
            raise SourceError(f"commit {rev} not found in {git_dir}")
        self.commit_date = _git(git_dir, "show", "-s", "--format=%cI", self.commit).strip() or None
        try:
            self.origin = _git(git_dir, "config", "--get", "remote.origin.url").strip() or None
        except SourceError:
            self.origin = None

    def entries(self) -> list[Entry]:
        out = _git(self.git_dir, "ls-tree", "-r", "-l", "-z", "--full-tree", self.commit or "HEAD")
        result = []
        for item in out.split("\0"):
            if not item:
                continue
            meta, path = item.split("\t", 1)
            mode, kind, sha, size = meta.split()
            if kind != "blob" or mode == "120000":  # skip submodules and symlinks
                continue
            # size is "-" for odd entries and "BAD" when the snapshot lacks the blob: -1 = unknown
            result.append(Entry(path, int(size) if size.isdigit() else -1, sha))
        return result

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, bytes | None]]:
        todo = list(entries)
        if not todo:
            return
        proc = subprocess.Popen(
            ["git", f"--git-dir={self.git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_GIT_ENV,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            # One request at a time keeps the pipes from filling; git answers immediately.
            for entry in todo:
                proc.stdin.write(entry.key.encode() + b"\n")
                proc.stdin.flush()
                header = proc.stdout.readline().decode().split()
                if len(header) < 3 or header[1] != "blob":
                    yield entry, None  # "<sha> missing": absent from the snapshot
                    continue
                size = int(header[2])
                data = proc.stdout.read(size)
                proc.stdout.read(1)  # trailing newline
                yield entry, data
        finally:
            proc.stdin.close()
            proc.stdout.close()
            proc.wait()


class DirSource(RepoSource):
    """Files of a plain directory (a checkout without usable git, or an unpacked archive)."""

    _SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "node_modules"}

    def __init__(self, root: Path) -> None:
        self.root = root

    def entries(self) -> list[Entry]:
        result = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in self._SKIP_DIRS)
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(self.root).as_posix()
                result.append(Entry(rel, full.stat().st_size, str(full)))
        return result

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, bytes | None]]:
        for entry in entries:
            try:
                yield entry, Path(entry.key).read_bytes()
            except OSError:
                yield entry, None


def open_source(path: Path, commit: str | None = None) -> RepoSource:
    """A git source when `path` holds a git directory, else a plain directory source."""
    if not path.exists():
        raise SourceError(f"{path} does not exist")
    git_dir = find_git_dir(path)
    if git_dir is not None:
        return GitSource(git_dir, commit)
    if commit:
        raise SourceError(f"{path} is not a git directory, so --commit {commit} cannot be read")
    if not path.is_dir():
        raise SourceError(f"{path} is not a directory")
    return DirSource(path)
