"""References travel (harness/references.py, `gpu2tpu references push|pull`): a bundle built where
the reference device is (a CUDA host) is pulled from a store and used on this XLA CPU node, found
by the facts it was built from; a pulled bundle is checked against the digest the task's
validated.json pins, never against a key the store could hold. The bundles here are stood in by
recording the facts (this machine has no CUDA device); tests/harness/test_reference_travel_run.py
evaluates against one for real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpu2tpu.cli import main
from gpu2tpu.harness import references, validated
from gpu2tpu.harness.ref_store import ReferenceStore
from gpu2tpu.harness.references import bundle_digest, bundle_dir, reference_key
from gpu2tpu.harness.references_cli import BundleRefused, pull
from gpu2tpu.record.execution import COMPLETE, MANIFEST, write_manifest
from gpu2tpu.record.sealed import KEY_ENV, seal
from gpu2tpu.record.targets import get_target
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, add_task_dirs, find_task
from gpu2tpu.tasks.spec import VALIDATED_FILE, RunSpec

TASK = "varlen_cls"
TARGET = get_target("xla-cpu")


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunSpec:
    """A copy of the task (so its validated.json is ours to write), an empty cache and a seal key
    of this node's own."""
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "seal.key"))
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(TASK_DIRS_ENV, "")
    shutil.copytree(find_task(TASK).task_dir, tmp_path / "tasks" / TASK,
                    ignore=shutil.ignore_patterns("__pycache__", VALIDATED_FILE))
    add_task_dirs([tmp_path / "tasks"])
    return find_task(TASK)


def built_elsewhere(spec: RunSpec, where: Path, device: str = "cuda") -> Path:
    """A complete bundle as a host whose reference device is `device` builds it: its facts say so
    and its key is the one such a host computes."""
    key = reference_key(spec, TARGET, device)
    bundle = where / f"{spec.task_id}-{key}"
    for run in ("seed-0", "gold"):
        (bundle / run).mkdir(parents=True)
        (bundle / run / "goal.json").write_text(json.dumps({"value": 0.5, "run": run}))
    parts = references.reference_key_parts(spec, TARGET, device)
    (bundle / COMPLETE).write_text(json.dumps({"key": key, "parts": parts, "seeds": [0]}))
    write_manifest(bundle)
    seal(bundle, (bundle / MANIFEST).read_bytes())  # the builder's seal: another node cannot check it
    return bundle


def pin(spec: RunSpec, bundle: Path, device: str = "cuda") -> None:
    validated.write(spec, 1, 1.0, "ran", {"references": {"key": bundle.name, "digest": bundle_digest(bundle),
                                                         "reference_device": device}})


def store_with(spec: RunSpec, tmp_path: Path) -> tuple[ReferenceStore, Path]:
    built = built_elsewhere(spec, tmp_path / "cuda-host")
    store = ReferenceStore(str(tmp_path / "store"))
    assert store.publish(built)
    return store, built


def test_a_cuda_bundle_is_pulled_and_used_here_without_building(
        spec: RunSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, built = store_with(spec, tmp_path)
    pin(spec, built)
    path = pull(store, spec, TARGET)
    assert path == bundle_dir(TASK, reference_key(spec, TARGET, "cuda"))
    assert bundle_digest(path) == bundle_digest(built)

    def no_build(*args: object) -> None:
        raise AssertionError("a pulled bundle must be used, not rebuilt")

    monkeypatch.setattr(references, "build_bundle", no_build)
    key, root = references.ensure_references(spec, TARGET, print)
    assert root == path and json.loads((root / COMPLETE).read_text())["parts"]["reference_device"] == "cuda"


def test_a_bundle_whose_digest_differs_from_the_pin_is_refused_naming_the_task(
        spec: RunSpec, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, built = store_with(spec, tmp_path)
    pin(spec, built)
    remote = tmp_path / "store" / built.name
    (remote / "gold" / "goal.json").write_text(json.dumps({"value": 0.99}))  # a better gold
    write_manifest(remote)  # consistent with itself: only the pin can tell
    with pytest.raises(BundleRefused, match=f"{TASK}: .*pins"):
        pull(store, spec, TARGET)
    assert not bundle_dir(TASK, reference_key(spec, TARGET, "cuda")).exists()
    assert main(["references", "pull", "--store", str(tmp_path / "store"), "--tasks", TASK]) == 1
    assert f"refused {TASK}:" in capsys.readouterr().out


def test_a_bundle_that_says_it_was_built_for_another_key_is_refused(spec: RunSpec, tmp_path: Path) -> None:
    store, built = store_with(spec, tmp_path)
    remote = tmp_path / "store" / built.name
    facts = json.loads((remote / COMPLETE).read_text())
    (remote / COMPLETE).write_text(json.dumps({**facts, "key": "0" * 16}))
    write_manifest(remote)
    pin(spec, remote)  # even pinned: the facts must be the ones this node needs
    with pytest.raises(BundleRefused, match="built as"):
        pull(store, spec, TARGET)


def test_a_task_without_a_pin_and_a_store_without_the_bundle_are_refused(spec: RunSpec,
                                                                         tmp_path: Path) -> None:
    store, built = store_with(spec, tmp_path)
    with pytest.raises(BundleRefused, match="pins no reference bundle"):
        pull(store, spec, TARGET)
    pin(spec, built_elsewhere(spec, tmp_path / "tpu-host", device="cpu"), device="cpu")
    with pytest.raises(BundleRefused, match="has no bundle"):
        pull(store, spec, TARGET)


def test_push_uploads_this_nodes_own_bundle_once(spec: RunSpec, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    own = built_elsewhere(spec, tmp_path / "cache" / "references", device=references.reference_device())
    assert own == bundle_dir(TASK, reference_key(spec, TARGET))
    args = ["references", "push", "--store", str(tmp_path / "store"), "--tasks", TASK]
    assert main(args) == 0 and "pushed" in capsys.readouterr().out
    assert main(args) == 0 and "already in the store" in capsys.readouterr().out
    assert (tmp_path / "store" / own.name / MANIFEST).is_file()
