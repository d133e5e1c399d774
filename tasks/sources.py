"""Upstream sources: a corpus project's files at its pinned commit, found, verified, materialised.

Resolution order: a sources directory (`--sources DIR` or $GPU2TPU_SOURCES) holding snapshots
(`<id>.tar.gz`, `<id>.tree.tsv`, `<id>.omitted.tsv`) or bare git mirrors (`<owner>+<name>` or
`<id>.git`); then the user cache; then a shallow `git fetch` of the one pinned commit. Every tree is
checked file by file against the listing's git blob ids, and the listing against the pinned root
tree id, before anything runs. Nothing from upstream is ever written into this repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpu2tpu.cache import cache_root
from gpu2tpu.errors import UserError

SOURCES_ENV = "GPU2TPU_SOURCES"
_GIT_ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1", "LC_ALL": "C"}


class SourceError(UserError):
    """A source is missing, unreadable or does not match its pin (message names the file)."""


@dataclass(frozen=True)
class Pin:
    """`source:` of an upstream task.yaml."""

    id: str  # corpus id, owner__name
    repo: str  # owner/name
    commit: str
    tree: str  # root tree id of the commit


@dataclass(frozen=True)
class Listed:
    mode: str
    sha: str
    path: str


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def tree_id(entries: list[Listed]) -> str:
    """The git root tree id of a full `ls-tree -r` listing (blobs, symlinks and submodules)."""
    def build(prefix: str, items: list[tuple[list[str], Listed]]) -> str:
        children: dict[str, list[tuple[list[str], Listed]]] = {}
        leaves: list[tuple[str, str, str]] = []
        for parts, entry in items:
            if len(parts) == 1:
                leaves.append((parts[0], entry.mode, entry.sha))
            else:
                children.setdefault(parts[0], []).append((parts[1:], entry))
        for name, sub in children.items():
            leaves.append((name, "40000", build(prefix + name + "/", sub)))
        # git sorts tree entries by name, with directories compared as if they ended in "/"
        leaves.sort(key=lambda e: e[0] + ("/" if e[1] == "40000" else ""))
        body = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                        for name, mode, sha in leaves)
        return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()

    return build("", [(e.path.split("/"), e) for e in entries])


def read_listing(path: Path) -> list[Listed]:
    """`<id>.tree.tsv`: `mode type sha size<TAB>path` per line (git ls-tree -r -l)."""
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            meta, rel = line.split("\t", 1)
            mode, _kind, sha, _size = meta.split()
        except ValueError:
            raise SourceError(f"{path}:{number}: not a `git ls-tree -r -l` line") from None
        entries.append(Listed(mode, sha, rel))
    return entries


def sources_dir(explicit: Path | None = None) -> Path | None:
    value = explicit or (Path(os.environ[SOURCES_ENV]) if os.environ.get(SOURCES_ENV) else None)
    return Path(value).expanduser().resolve() if value else None


def cache_dir(pin: Pin) -> Path:
    return cache_root() / "sources" / f"{pin.id}-{pin.commit[:12]}"


def verify_tree(root: Path, listing: list[Listed], pin: Pin, omitted: set[str],
                needed_ok: tuple[str, ...] = ()) -> None:
    """Every file under `root` is in the listing with the same blob id; every listed file is there
    or was omitted from the snapshot; the listing hashes to the pinned tree id."""
    if tree_id(listing) != pin.tree:
        raise SourceError(f"the file listing of {pin.id} does not hash to the pinned tree {pin.tree[:12]}"
                          f" (commit {pin.commit[:12]}): the snapshot is not that commit")
    by_path = {e.path: e for e in listing}
    seen = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        entry = by_path.get(rel)
        if entry is None:
            raise SourceError(f"{pin.id}: {rel} is not in the commit's tree; refusing the snapshot")
        data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        if blob_id(data) != entry.sha:
            raise SourceError(f"{pin.id}: {rel} differs from the pinned commit (blob {blob_id(data)[:12]}"
                              f" vs {entry.sha[:12]}); the snapshot was altered: fetch it again")
        seen.add(rel)
    missing = [e.path for e in listing if e.path not in seen and e.mode != "160000"]
    unexplained = [m for m in missing if m not in omitted]
    if unexplained:
        raise SourceError(f"{pin.id}: {len(unexplained)} file(s) of the commit are missing, e.g. "
                          f"{unexplained[0]}; fetch the snapshot again")
    code = [m for m in missing if m.endswith(".py") and not m.startswith(needed_ok)]
    if code:
        raise SourceError(f"{pin.id}: the snapshot lacks code the task needs: {', '.join(code[:5])}")


def _extract_tar(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            pure = PurePosixPath(member.name)
            if pure.is_absolute() or ".." in pure.parts or not (member.isfile() or member.issym()
                                                                  or member.isdir()):
                raise SourceError(f"{archive}: member {member.name!r} is not a plain file inside the tree")
        tar.extractall(dest, filter="tar")


Found = tuple[list[Listed], set[str]]  # the listing a tree was verified against, omitted paths


def _from_snapshot(base: Path, pin: Pin, dest: Path, needed_ok: tuple[str, ...]) -> Found | None:
    archive, listing_file = base / f"{pin.id}.tar.gz", base / f"{pin.id}.tree.tsv"
    if not archive.is_file() or not listing_file.is_file():
        return None
    omitted_file = base / f"{pin.id}.omitted.tsv"
    omitted = {line.split("\t", 1)[0] for line in omitted_file.read_text().splitlines() if line.strip()} \
        if omitted_file.is_file() else set()
    _extract_tar(archive, dest)
    listing = read_listing(listing_file)
    verify_tree(dest, listing, pin, omitted, needed_ok)
    return listing, omitted


def _git(args: list[str], cwd: Path | None = None, timeout: float = 120) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=_GIT_ENV, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise SourceError(f"git {' '.join(args[:3])}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _from_git(git_dir: Path, pin: Pin, dest: Path, needed_ok: tuple[str, ...]) -> Found:
    listing = []
    for line in _git(["--git-dir", str(git_dir), "ls-tree", "-r", "--full-tree", pin.commit]).splitlines():
        if line.strip():
            meta, rel = line.split("\t", 1)
            mode, _kind, sha = meta.split()
            listing.append(Listed(mode, sha, rel))
    with tempfile.TemporaryDirectory() as tmp:
        tar_path = Path(tmp) / "tree.tar"
        _git(["--git-dir", str(git_dir), "archive", "--format=tar", "-o", str(tar_path), pin.commit])
        _extract_tar(tar_path, dest)
    verify_tree(dest, listing, pin, omitted=set(), needed_ok=needed_ok)
    return listing, set()


def _mirror(base: Path, pin: Pin) -> Path | None:
    for name in (pin.repo.replace("/", "+"), f"{pin.id}.git", pin.id):
        candidate = base / name
        if (candidate / "HEAD").is_file() or (candidate / "objects").is_dir():
            return candidate
    return None


def _fetch_github(pin: Pin, dest: Path, needed_ok: tuple[str, ...]) -> Found:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo.git"
        _git(["init", "--bare", "-q", str(repo)])
        try:
            _git(["--git-dir", str(repo), "fetch", "--depth", "1", "-q",
                  f"https://github.com/{pin.repo}.git", pin.commit], timeout=300)
        except (SourceError, subprocess.TimeoutExpired) as exc:
            raise SourceError(
                f"{pin.id}: no snapshot found and GitHub could not be reached ({exc}); give a sources "
                f"directory holding {pin.id}.tar.gz and {pin.id}.tree.tsv (or a bare mirror) with "
                f"--sources DIR or ${SOURCES_ENV}") from None
        return _from_git(repo, pin, dest, needed_ok)


def materialise_source(pin: Pin, sources: Path | None = None, needed_ok: tuple[str, ...] = ()) -> Path:
    """A verified copy of the pinned tree in the user cache (read it, never edit it); verified again
    on every call, so a cache edited after the fact is refused and rebuilt."""
    cached = cache_dir(pin) / "tree"
    stamp = cache_dir(pin) / "verified.json"
    if stamp.is_file() and cached.is_dir():
        listing = [Listed(**e) for e in json.loads(stamp.read_text())["listing"]]
        try:
            verify_tree(cached, listing, pin, set(json.loads(stamp.read_text())["omitted"]), needed_ok)
            return cached
        except SourceError:
            shutil.rmtree(cache_dir(pin), ignore_errors=True)  # altered after caching: rebuild
    base = sources_dir(sources)
    work = Path(tempfile.mkdtemp(prefix=f"gpu2tpu-src-{pin.id}-"))
    try:
        tree = work / "tree"
        tree.mkdir()
        found = _from_snapshot(base, pin, tree, needed_ok) if base is not None else None
        if found is None and base is not None and (mirror := _mirror(base, pin)) is not None:
            found = _from_git(mirror, pin, tree, needed_ok)
        listing, omitted = found if found is not None else _fetch_github(pin, tree, needed_ok)
        cache_dir(pin).mkdir(parents=True, exist_ok=True)
        shutil.rmtree(cached, ignore_errors=True)
        shutil.move(str(tree), cached)
        stamp.write_text(json.dumps({"pin": pin.__dict__, "listing": [e.__dict__ for e in listing],
                                     "omitted": sorted(omitted)}))
        return cached
    finally:
        shutil.rmtree(work, ignore_errors=True)


def source_present(pin: Pin, sources: Path | None = None) -> str:
    """Where the source would come from now: 'cache', 'sources', 'mirror' or 'missing'."""
    if (cache_dir(pin) / "verified.json").is_file():
        return "cache"
    base = sources_dir(sources)
    if base is not None and (base / f"{pin.id}.tar.gz").is_file():
        return "sources"
    if base is not None and _mirror(base, pin) is not None:
        return "mirror"
    return "missing"
