"""Working copies: the original project, or the project with a migration applied."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpu2tpu.tasks.materialise import TreeDiffError, diff_dirs, git_apply, write_patch
from gpu2tpu.tasks.spec import RunSpec

_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "checkpoints")


class PatchRejected(Exception):
    """The migration cannot be applied as given (message says why)."""


@dataclass
class Workspace:
    root: Path  # temporary directory holding the probe and the project copy

    @property
    def project(self) -> Path:
        return self.root / "project"

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def original_tree(spec: RunSpec) -> Path:
    from gpu2tpu.tasks.materialise import original_tree as tree

    return tree(spec)


def fresh_copy(spec: RunSpec) -> Workspace:
    ws = Workspace(Path(tempfile.mkdtemp(prefix=f"gpu2tpu-{spec.task_id}-")))
    shutil.copytree(original_tree(spec), ws.project, ignore=_IGNORE, symlinks=True)
    return ws


def touched_paths(patch: str) -> list[str]:
    """Paths the patch creates, edits, renames or deletes, as git itself reads them
    (`git apply --numstat -z`: quoted and escaped names decoded, both sides of a rename)."""
    return sorted({path for path, _ in _numstat(patch)})


def _numstat(patch: str) -> list[tuple[str, bool]]:
    """(path, is_binary) for every path of `patch`; PatchRejected when git cannot read it."""
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-numstat-") as tmp:
        proc = subprocess.run(["git", "apply", "--numstat", "-z", "-"], cwd=tmp, capture_output=True,
                              input=(patch if patch.endswith("\n") else patch + "\n").encode())
    if proc.returncode != 0:
        raise PatchRejected(f"git cannot read the patch: {proc.stderr.decode(errors='replace').strip()}")
    fields = proc.stdout.split(b"\0")
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(fields) and fields[i]:
        added, deleted, path = fields[i].split(b"\t", 2)
        binary = added == b"-" and deleted == b"-"
        if path:  # plain entry
            out.append((path.decode(errors="surrogateescape"), binary))
            i += 1
        else:  # rename or copy: the old and the new name follow
            out += [(fields[i + 1].decode(errors="surrogateescape"), binary),
                    (fields[i + 2].decode(errors="surrogateescape"), binary)]
            i += 3
    return out


def _shadows(name: str, protected: str) -> bool:
    """Whether path `name` is, contains, or shadows on import the protected path: `data/` (a
    package) or `data.so`/`data.pyc` or `__pycache__/data.*.pyc` shadow `data.py`."""
    prot = protected.rstrip("/")
    if name == prot or name.startswith(prot + "/"):
        return True
    if prot.endswith(".py"):
        stem = prot[:-3]
        folder, _, base = stem.rpartition("/")
        cache = f"{folder}/__pycache__/{base}." if folder else f"__pycache__/{base}."
        return name == stem or name.startswith((stem + "/", stem + ".", cache))
    return False


def check_paths(spec: RunSpec, paths: list[str]) -> None:
    for name in paths:
        pure = PurePosixPath(name)
        if pure.is_absolute() or ".." in pure.parts:
            raise PatchRejected(f"patch touches {name!r}, outside the project directory")
        for protected in spec.protected:
            if _shadows(name, protected):
                raise PatchRejected(f"patch edits protected path {name!r} (protected: "
                                    f"{', '.join(spec.protected)}; a new file that shadows a "
                                    "protected module counts as an edit)")


def tree_entries(root: Path, skip: bool = False) -> dict[str, tuple[str, bytes]]:
    """Every entry below `root` as {relative path: (kind, content)}; PatchRejected for a link that
    leaves `root` or anything that is not a regular file, directory or link. `skip`: leave out
    what working copies never take (.git, bytecode, checkpoints)."""
    out: dict[str, tuple[str, bytes]] = {}
    base = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel == ".git" or (skip and _IGNORE(dirpath, [name])):
                continue
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                if not path.resolve().is_relative_to(base):
                    raise PatchRejected(f"{rel!r} is a link to {os.readlink(path)!r}, outside the "
                                        "project: links must stay inside it")
                out[rel] = ("link", os.readlink(path).encode())
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("exec" if st.st_mode & 0o111 else "file", path.read_bytes())
            elif not stat.S_ISDIR(st.st_mode):
                raise PatchRejected(f"{rel!r} is not a regular file, directory or link")
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()
                       and Path(dirpath, d).relative_to(root).as_posix() != ".git"
                       and not (skip and _IGNORE(dirpath, [d]))]
    return out


def changed_paths(original: Path, result: Path) -> list[str]:
    """Paths whose kind or content differ between two trees (added, removed or changed)."""
    a, b = tree_entries(original, skip=True), tree_entries(result)
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def check_tree(spec: RunSpec, project: Path) -> None:
    """The migrated tree itself, whatever the patch said: no protected path changed or shadowed,
    no link leaving the project, no special file."""
    check_paths(spec, changed_paths(original_tree(spec), project))


def apply_patch(spec: RunSpec, patch: str) -> Workspace:
    """A fresh copy with `patch` applied with git-apply semantics, or PatchRejected."""
    if not patch.strip():
        raise PatchRejected("the patch is empty")
    entries = _numstat(patch)
    check_paths(spec, sorted({p for p, _ in entries}))
    binary = sorted(p for p, is_binary in entries if is_binary)
    if binary and not spec.raw.get("allow_binary_patches"):
        raise PatchRejected(f"binary patch for {', '.join(binary)}: this task takes text patches "
                            "only (send source changes as text)")
    ws = fresh_copy(spec)
    patch_file = ws.root / "migration.patch"
    write_patch(patch_file, patch if patch.endswith("\n") else patch + "\n")  # a CRLF line keeps its \r
    proc = git_apply(patch_file, ws.project)
    patch_file.unlink()
    if proc.returncode != 0:
        ws.cleanup()
        raise PatchRejected(f"git apply failed: {proc.stderr.strip() or proc.stdout.strip()}")
    try:
        check_tree(spec, ws.project)
    except PatchRejected:
        ws.cleanup()
        raise
    return ws


def from_directory(spec: RunSpec, migrated: Path) -> tuple[Workspace, str]:
    if not migrated.is_dir() or migrated.is_symlink():
        raise PatchRejected(f"migrated_dir {migrated} is not a directory")
    tree_entries(migrated)  # refuses links that leave it and special files before anything is read
    try:
        patch = diff_dirs(original_tree(spec), migrated)
    except TreeDiffError as exc:
        raise PatchRejected(str(exc)) from exc
    ws = Workspace(Path(tempfile.mkdtemp(prefix=f"gpu2tpu-{spec.task_id}-")))
    shutil.copytree(migrated, ws.project, ignore=_IGNORE, symlinks=True)
    try:
        check_tree(spec, ws.project)
    except PatchRejected:
        ws.cleanup()
        raise
    return ws, patch
