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


def _keyed_bundle(tmp_path: Path, task: str, parts: dict) -> Path:
    import hashlib

    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
    root = tmp_path / "cache" / "references" / f"{task}-{key}"
    (root / "gold").mkdir(parents=True)
    (root / "gold" / "goal.json").write_text(json.dumps({"value": 0.9}))
    (root / "complete").write_text(json.dumps({"key": key, "parts": parts}))
    write_manifest(root)
    sealed.seal(root, (root / MANIFEST).read_bytes())
    return root


def test_a_sealed_bundle_copied_under_another_name_is_refused(tmp_path: Path) -> None:
    """Issue 39: the seal binds file hashes; with write access to the store (no key), a sealed
    bundle of one task copied under another bundle's name passed. Its sealed facts name its key."""
    from gpu2tpu.harness.references import usable

    a = _keyed_bundle(tmp_path, "task_a", {"task": "aaa", "target": "xla-cpu"})
    b = _keyed_bundle(tmp_path, "task_b", {"task": "bbb", "target": "xla-cpu"})
    assert usable(a) and usable(b)
    forged = b.with_name("task_b-" + b.name.rsplit("-", 1)[1])
    shutil.rmtree(forged)
    shutil.copytree(a, forged)  # task a's bundle under task b's name...
    shutil.copyfile(sealed.seal_path(a), sealed.seal_path(forged))  # ...with its valid seal
    assert sealed.is_sealed(forged, (forged / MANIFEST).read_bytes())  # the seal alone is fooled
    assert not usable(forged)


def test_a_kept_suite_copied_under_another_tasks_name_is_refused(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu2tpu.harness import evidence
    from gpu2tpu.record.targets import get_target

    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    target = get_target("xla-cpu")
    specs = [find_task("cifar_amp"), find_task("charlm")]
    for spec in specs:
        run = tmp_path / "run" / spec.task_id
        (run / "gold" / spec.task_id).mkdir(parents=True)
        (run / "gold" / spec.task_id / "report.json").write_text(json.dumps({"reference": {}}))
        evidence.keep(spec, target, "bwrap", run, [f"gold/{spec.task_id}/report.json"])
        assert evidence.kept(spec, target, "bwrap") is not None
    mine, other = (evidence.evidence_dir(s, target, "bwrap") for s in specs)
    shutil.rmtree(other)
    shutil.copytree(mine, other)
    shutil.copyfile(sealed.seal_path(mine), sealed.seal_path(other))
    assert sealed.is_sealed(other, (other / MANIFEST).read_bytes())
    assert evidence.kept(specs[1], target, "bwrap") is None
