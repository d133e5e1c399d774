"""Working copy (no history), path confinement, and a diff that `git apply` accepts."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpu2tpu.agent.workspace import (
    PathRefused,
    confine,
    diff_trees,
    make_working_copy,
    tree_files,
)


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
            for rel, p in tree_files(root).items()}


def _git_apply(original: Path, patch: str, tmp: Path) -> Path:
    """Apply `patch` to a copy of `original` with git apply (as the harness would)."""
    target = tmp / "applied"
    shutil.copytree(original, target, symlinks=True)
    (tmp / "p.diff").write_text(patch)
    done = subprocess.run(["git", "apply", "--check", str(tmp / "p.diff")], cwd=target,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    subprocess.run(["git", "apply", str(tmp / "p.diff")], cwd=target, check=True)
    return target


def test_working_copy_has_no_history(tasks_dir: Path, tmp_path: Path) -> None:
    work = make_working_copy(tasks_dir / "toy" / "project", tmp_path / "w")
    assert (work / "train.py").is_file()
    assert not (work / ".git").exists()


@pytest.mark.parametrize("path", ["../evaluate.py", "../migrations/gold.patch", "../../toy",
                                  "sub/../../evaluate.py", "/etc/passwd", ".git/HEAD", ""])
def test_confine_refuses_escapes(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "sub").mkdir()
    with pytest.raises(PathRefused):
        confine(root, path)


def test_confine_refuses_symlink_escape(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("x")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "linkdir").symlink_to(tmp_path)
    with pytest.raises(PathRefused):
        confine(root, "link.txt")
    with pytest.raises(PathRefused):
        confine(root, "linkdir/secret.txt")
    assert confine(root, str(root / "a.py")) == (root / "a.py").resolve()
    assert confine(root, "./new/dir/a.py") == (root / "new/dir/a.py").resolve()


def test_diff_round_trips_through_git_apply(tmp_path: Path) -> None:
    old = tmp_path / "old"
    (old / "pkg").mkdir(parents=True)
    (old / "train.py").write_text("".join(f"line {i}\n" for i in range(40)))
    (old / "gone.py").write_text("bye\n")
    (old / "nonl.py").write_text("a\nb")
    (old / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (old / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (old / "blob.bin").write_bytes(b"\x00\x01")
    (old / "pkg" / "same.py").write_text("same\n")
    (old / "was_empty.py").write_text("")
    new = tmp_path / "new"
    shutil.copytree(old, new)
    text = (new / "train.py").read_text().replace("line 3\n", "line three\n")
    (new / "train.py").write_text(text.replace("line 30\n", "") + "tail\n")
    (new / "gone.py").unlink()
    (new / "nonl.py").write_text("a\nB")
    (new / "crlf.txt").write_bytes(b"one\r\n2\r\n")
    (new / "run.sh").chmod(0o755)
    (new / "pkg" / "added.py").write_text("import torch_xla\n")
    (new / "empty.py").write_text("")
    (new / "was_empty.py").unlink()
    (new / "alias.py").symlink_to("train.py")
    (new / "\u00e9t\u00e9.txt").write_text("unicode name? no: content \u00e9\n")
    (new / "blob.bin").write_bytes(b"\x00\x02")  # binary: reported, not patched
    (new / "__pycache__").mkdir()
    (new / "__pycache__" / "x.pyc").write_bytes(b"\x00junk")
    diff = diff_trees(old, new)
    assert diff.skipped == ["blob.bin: binary file"]
    assert "diff --git a/train.py b/train.py" in diff.patch
    assert "__pycache__" not in diff.patch
    applied = _git_apply(old, diff.patch, tmp_path)
    got, want = _tree(applied), _tree(new)
    want["blob.bin"] = b"\x00\x01"
    assert got == want
    assert os.access(applied / "run.sh", os.X_OK)


def test_no_change_no_patch(tasks_dir: Path, tmp_path: Path) -> None:
    project = tasks_dir / "toy" / "project"
    work = make_working_copy(project, tmp_path / "w")
    diff = diff_trees(project, work)  # the original's .git is not a change either
    assert diff.patch == "" and diff.files == []
