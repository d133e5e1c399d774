"""Working copies: the original project, or the project with a migration applied."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpu2tpu.harness.spec import RunSpec

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
    from gpu2tpu.harness.migrations import original_tree as tree

    return tree(spec)


def fresh_copy(spec: RunSpec) -> Workspace:
    ws = Workspace(Path(tempfile.mkdtemp(prefix=f"gpu2tpu-{spec.task_id}-")))
    shutil.copytree(original_tree(spec), ws.project, ignore=_IGNORE, symlinks=True)
    return ws


def touched_paths(patch: str) -> list[str]:
    """Paths a unified diff creates, edits, renames or deletes (without a/ b/ prefixes)."""
    paths: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].split("\t", 1)[0].strip()
            if name != "/dev/null":
                paths.append(name[2:] if name[:2] in ("a/", "b/") else name)
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            paths.append(line.split(" ", 2)[2].strip())
    return sorted(set(paths))


def check_paths(spec: RunSpec, paths: list[str]) -> None:
    for name in paths:
        pure = PurePosixPath(name)
        if pure.is_absolute() or ".." in pure.parts:
            raise PatchRejected(f"patch touches {name!r}, outside the project directory")
        for protected in spec.protected:
            if name == protected or name.startswith(protected.rstrip("/") + "/"):
                raise PatchRejected(f"patch edits protected path {name!r} (protected: "
                                    f"{', '.join(spec.protected)})")


def apply_patch(spec: RunSpec, patch: str) -> Workspace:
    """A fresh copy with `patch` applied with git-apply semantics, or PatchRejected."""
    if not patch.strip():
        raise PatchRejected("the patch is empty")
    check_paths(spec, touched_paths(patch))
    ws = fresh_copy(spec)
    patch_file = ws.root / "migration.patch"
    patch_file.write_text(patch if patch.endswith("\n") else patch + "\n")
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch_file)], cwd=ws.project,
                          capture_output=True, text=True)
    patch_file.unlink()
    if proc.returncode != 0:
        ws.cleanup()
        raise PatchRejected(f"git apply failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return ws


def diff_dirs(original: Path, migrated: Path) -> str:
    """Unified diff (git format, a/ b/ prefixes, paths relative to the project)."""
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-diff-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        shutil.copytree(original, a, ignore=_IGNORE)
        shutil.copytree(migrated, b, ignore=_IGNORE)
        proc = subprocess.run(["git", "diff", "--no-index", "--no-prefix", "--binary", "a", "b"],
                              cwd=tmp, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise PatchRejected(f"could not diff the migrated directory: {proc.stderr.strip()}")
    # --no-prefix writes a/x and b/x literally, which is git's own a/ b/ convention
    return proc.stdout


def from_directory(spec: RunSpec, migrated: Path) -> tuple[Workspace, str]:
    if not migrated.is_dir():
        raise PatchRejected(f"migrated_dir {migrated} is not a directory")
    patch = diff_dirs(original_tree(spec), migrated)
    check_paths(spec, touched_paths(patch))
    ws = Workspace(Path(tempfile.mkdtemp(prefix=f"gpu2tpu-{spec.task_id}-")))
    shutil.copytree(migrated, ws.project, ignore=_IGNORE)
    return ws, patch
