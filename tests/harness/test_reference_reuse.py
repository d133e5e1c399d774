"""A test session reuses the user cache's reference bundles by content key only
(tests/reference_reuse.py): a sealed bundle under the current key comes in; one under another key,
one edited after sealing, and one sealed with another install's key do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference_reuse import reuse_references

from gpu2tpu.harness.ref_store import COMPLETE, local_bundle
from gpu2tpu.harness.references import reference_key, reference_key_parts
from gpu2tpu.record.execution import MANIFEST, write_manifest
from gpu2tpu.record.sealed import KEY_ENV, seal
from gpu2tpu.record.targets import TARGETS
from gpu2tpu.tasks.finder import find_task

TASK = "varlen_cls"


def sealed_bundle(store: Path, key: str, built_as: str | None = None) -> Path:
    """A sealed bundle named `key` whose sealed facts say it was built as `built_as` (default: the
    current key, from this node's facts)."""
    bundle = store / f"{TASK}-{key}"
    (bundle / "seed-0").mkdir(parents=True)
    (bundle / "seed-0" / "goal.json").write_text(json.dumps({"value": 0.5}))
    parts = reference_key_parts(find_task(TASK), TARGETS["xla-cpu"])
    (bundle / COMPLETE).write_text(json.dumps({"key": built_as or current_key(), "parts": parts}))
    write_manifest(bundle)
    seal(bundle, (bundle / MANIFEST).read_bytes())
    return bundle


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "seal.key"))
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "session"))
    return tmp_path / "user-references"


def current_key() -> str:
    return reference_key(find_task(TASK), TARGETS["xla-cpu"])


def test_a_sealed_bundle_under_the_current_key_is_copied_in(store: Path) -> None:
    sealed_bundle(store, current_key())
    assert reuse_references(store) == [f"{TASK}/xla-cpu"]
    copy = local_bundle(TASK, current_key())
    assert json.loads((copy / "seed-0" / "goal.json").read_text()) == {"value": 0.5}
    assert (store / f"{TASK}-{current_key()}").is_dir(), "the user's bundle stays where it was"


def test_a_bundle_under_another_key_stays_out(store: Path) -> None:
    sealed_bundle(store, "0" * 16)
    assert reuse_references(store) == []
    assert not local_bundle(TASK, "0" * 16).exists()


def test_a_bundle_built_as_another_key_is_not_reused(store: Path) -> None:
    """Sealed, under the current key's name, but its sealed facts say another key: a bundle
    copied in under a name that is not its own."""
    sealed_bundle(store, current_key(), built_as="0" * 16)
    assert reuse_references(store) == []


def test_a_bundle_edited_after_sealing_is_not_reused(store: Path) -> None:
    bundle = sealed_bundle(store, current_key())
    (bundle / "seed-0" / "goal.json").write_text(json.dumps({"value": 0.9}))
    write_manifest(bundle)  # a manifest recomputed by whoever edited it still breaks the seal
    assert reuse_references(store) == []


def test_a_bundle_sealed_with_another_key_is_not_reused(store: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "other.key"))
    sealed_bundle(store, current_key())
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "seal.key"))
    assert reuse_references(store) == []


def _bundle(root: Path, goal: float) -> Path:
    (root / "seed-0").mkdir(parents=True)
    (root / "seed-0" / "goal.json").write_text(json.dumps({"value": goal}))
    (root / COMPLETE).write_text("{}")
    write_manifest(root)
    return root


def test_a_run_directory_holding_other_references_of_the_key_asks_for_a_new_run_id(
        tmp_path: Path) -> None:
    """A validate rerun into a run directory whose references of a key were built before the cache
    was cleared: the rebuilt bundle differs, and the run stops naming the run directory and what to
    do (it used to end in a ValueError traceback after the first task's references were built)."""
    from gpu2tpu.errors import UserError
    from gpu2tpu.harness.references import copy_references

    cached = _bundle(tmp_path / "cache" / "k1", 0.5)
    run_dir = tmp_path / "runs" / "validate"
    _bundle(run_dir / "references" / "k1", 0.6)
    with pytest.raises(UserError, match="give a new --run-id"):
        copy_references(cached, run_dir / "references" / "k1")
    fresh = tmp_path / "runs" / "fresh" / "references" / "k1"
    assert copy_references(cached, fresh) == copy_references(cached, fresh)
