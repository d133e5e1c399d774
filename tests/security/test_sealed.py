"""Nothing the candidate could have touched is trusted afterwards: the task's sources are copied and
checked before it runs, and a reference bundle's manifest is sealed under a key kept elsewhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpu2tpu.record import sealed
from gpu2tpu.record.execution import MANIFEST, verify_manifest, write_manifest
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.spec import task_content_hash


@pytest.fixture(autouse=True)
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sealed.KEY_ENV, str(tmp_path / "state" / "seal.key"))


def _bundle(tmp_path: Path) -> Path:
    root = tmp_path / "cache" / "references" / "t-abc"
    (root / "gold").mkdir(parents=True)
    (root / "gold" / "goal.json").write_text(json.dumps({"value": 0.9}))
    (root / "complete").write_text("{}")
    write_manifest(root)
    sealed.seal(root, (root / MANIFEST).read_bytes())
    return root


def test_a_rewritten_bundle_with_a_recomputed_manifest_breaks_the_seal(tmp_path: Path) -> None:
    root = _bundle(tmp_path)
    assert verify_manifest(root) is not None and sealed.is_sealed(root, (root / MANIFEST).read_bytes())
    (root / "gold" / "goal.json").write_text(json.dumps({"value": 0.1}))
    write_manifest(root)  # what the attacker who rewrote the bundle does next
    assert verify_manifest(root) is not None  # the manifest alone is fooled...
    assert not sealed.is_sealed(root, (root / MANIFEST).read_bytes())  # ...the seal is not
    sealed.seal_path(root).unlink()
    assert not sealed.is_sealed(root, (root / MANIFEST).read_bytes())


def test_the_key_lives_outside_the_cache_and_only_its_owner_reads_it(tmp_path: Path) -> None:
    key = sealed.seal_key()
    assert len(key) == 32 and sealed.seal_key() == key
    assert sealed.key_file().stat().st_mode & 0o077 == 0
    assert not sealed.key_file().is_relative_to(tmp_path / "cache")


def test_goal_sources_are_taken_before_the_run(tmp_path: Path) -> None:
    spec = find_task("cifar_amp")
    task = tmp_path / "cifar_amp"
    shutil.copytree(spec.task_dir, task)
    snap = sealed.snapshot_sources(task, task_content_hash(task), task_content_hash)
    try:
        (task / "evaluate.py").write_text("print('forged accuracy 1.0')\n")  # after the snapshot
        assert "forged" not in (snap / "evaluate.py").read_text()
        assert not (snap / "migrations").exists()
        with pytest.raises(sealed.TaskChanged, match="changed after the task was loaded"):
            sealed.snapshot_sources(task, spec.content_hash, task_content_hash)
    finally:
        shutil.rmtree(snap.parent)
