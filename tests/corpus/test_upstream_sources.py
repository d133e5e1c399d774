"""Upstream sources are verified file by file against the pinned commit before anything runs."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from gpu2tpu.tasks.sources import Pin, SourceError, materialise_source, read_listing, tree_id


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Pin]:
    """A tiny real git commit, packed the way ../shared/sources packs corpus projects."""
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "train.py").write_text("print('train')\n")
    (repo / "data.bin").write_bytes(b"\0" * 10)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x", cwd=repo)
    commit = _git("rev-parse", "HEAD", cwd=repo).strip()
    tree = _git("rev-parse", "HEAD^{tree}", cwd=repo).strip()
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "o__r.tree.tsv").write_text(_git("ls-tree", "-r", "-l", "--full-tree", commit, cwd=repo))
    (sources / "o__r.omitted.tsv").write_text("data.bin\tblob absent from the snapshot\n")
    with tarfile.open(sources / "o__r.tar.gz", "w:gz") as tar:
        for rel in ("pkg/train.py", "run.sh"):
            tar.add(repo / rel, arcname=rel)
    return sources, Pin("o__r", "o/r", commit, tree)


def test_listing_hashes_to_the_real_tree_id(snapshot: tuple[Path, Pin]) -> None:
    sources, pin = snapshot
    assert tree_id(read_listing(sources / "o__r.tree.tsv")) == pin.tree


def test_verified_tree_is_materialised_and_reused(snapshot: tuple[Path, Pin]) -> None:
    sources, pin = snapshot
    tree = materialise_source(pin, sources)
    assert (tree / "pkg" / "train.py").read_text() == "print('train')\n"
    assert materialise_source(pin, None) == tree  # from the cache, verified again


def test_one_changed_byte_is_refused_with_the_file_named(snapshot: tuple[Path, Pin]) -> None:
    sources, pin = snapshot
    data = (Path(str(sources / "o__r.tar.gz")))
    with tarfile.open(data) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers() if m.isfile()]  # type: ignore[union-attr]
    with tarfile.open(data, "w:gz") as tar:
        for member, content in members:
            if member.name == "pkg/train.py":
                content = content.replace(b"train", b"trbin")
            tar.addfile(member, io.BytesIO(content))
    with pytest.raises(SourceError, match=r"pkg/train\.py differs from the pinned commit"):
        materialise_source(pin, sources)


def test_wrong_pin_and_missing_code_are_refused(snapshot: tuple[Path, Pin], tmp_path: Path) -> None:
    sources, pin = snapshot
    with pytest.raises(SourceError, match="does not hash to the pinned tree"):
        materialise_source(Pin(pin.id, pin.repo, pin.commit, "0" * 40), sources)
    (sources / "o__r.omitted.tsv").write_text("data.bin\tabsent\npkg/train.py\tabsent\n")
    with tarfile.open(sources / "o__r.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "repo" / "run.sh", arcname="run.sh")
    with pytest.raises(SourceError, match=r"lacks code the task needs: pkg/train\.py"):
        materialise_source(pin, sources)


def test_a_cache_edited_after_the_fact_is_rebuilt(snapshot: tuple[Path, Pin]) -> None:
    sources, pin = snapshot
    tree = materialise_source(pin, sources)
    (tree / "pkg" / "train.py").write_text("print('poisoned')\n")
    tree = materialise_source(pin, sources)
    assert (tree / "pkg" / "train.py").read_text() == "print('train')\n"
    shutil.rmtree(tree.parent)


def test_no_source_anywhere_says_how_to_provide_one(snapshot: tuple[Path, Pin], tmp_path: Path) -> None:
    _, pin = snapshot
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="GPU2TPU_SOURCES"):
        materialise_source(Pin("x__y", "x/y", pin.commit, pin.tree), empty)
