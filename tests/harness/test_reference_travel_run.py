"""A bundle built where the reference device is CUDA, pulled from a store onto this XLA CPU node
and used to grade a migration for real: nothing is rebuilt, and the report says which device the
reference ran on. The CUDA host is stood in by recording the facts (this machine has none): a
bundle built here, its `complete` facts and key rewritten as a CUDA host's, re-manifested."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpu2tpu.cli import main
from gpu2tpu.harness import references, validated
from gpu2tpu.harness.ref_store import ReferenceStore
from gpu2tpu.harness.references import bundle_digest, ensure_references, reference_key
from gpu2tpu.record.execution import COMPLETE, MANIFEST, write_manifest
from gpu2tpu.record.sealed import seal
from gpu2tpu.record.targets import get_target
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, add_task_dirs, find_task
from gpu2tpu.tasks.materialise import migration_patch
from gpu2tpu.tasks.spec import VALIDATED_FILE

TASK = "varlen_cls"
TARGET = get_target("xla-cpu")

pytestmark = pytest.mark.slow


def test_a_pulled_cuda_bundle_grades_here_and_the_report_names_its_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TASK_DIRS_ENV, "")
    shutil.copytree(find_task(TASK).task_dir, tmp_path / "tasks" / TASK,
                    ignore=shutil.ignore_patterns("__pycache__", VALIDATED_FILE))
    add_task_dirs([tmp_path / "tasks"])
    spec = find_task(TASK)
    _, built = ensure_references(spec, TARGET, print)  # the session's bundle (built once)

    # the CUDA host's bundle: the same runs, its facts those of a host whose reference is CUDA
    key = reference_key(spec, TARGET, "cuda")
    cuda = tmp_path / "cuda-host" / f"{TASK}-{key}"
    shutil.copytree(built, cuda)
    facts = json.loads((cuda / COMPLETE).read_text())
    parts = references.reference_key_parts(spec, TARGET, "cuda")
    (cuda / COMPLETE).write_text(json.dumps({**facts, "key": key, "parts": parts}))
    (cuda / MANIFEST).unlink()
    write_manifest(cuda)
    seal(cuda, (cuda / MANIFEST).read_bytes())
    store = tmp_path / "store"
    assert ReferenceStore(str(store)).publish(cuda)
    validated.write(spec, 1, 1.0, "ran", {"references": {"key": cuda.name, "digest": bundle_digest(cuda),
                                                         "reference_device": "cuda"}})

    # this node: an empty cache, the bundle pulled, then a migration graded against it
    node_cache = tmp_path / "node-cache"
    monkeypatch.setenv("GPU2TPU_CACHE", str(node_cache))
    assert main(["references", "pull", "--store", str(store), "--tasks", TASK]) == 0
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"schema_version": 1, "task_id": TASK, "agent": "gold",
                                 "patch": migration_patch(spec, "gold"), "claimed_success": True}) + "\n")
    assert main(["evaluate", "--predictions", str(preds), "--run-id", "travel",
                 "--runs", str(tmp_path / "runs")]) == 0
    report = json.loads((tmp_path / "runs" / "travel" / "gold" / TASK / "report.json").read_text())
    assert report["reference"]["device"] == "cuda" and report["reference"]["id"] == key
    assert report["verdict"]["migrated"], report["verdict"]
    assert [p.name for p in (node_cache / "references").iterdir() if p.is_dir()] == [cuda.name]
