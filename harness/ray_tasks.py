"""What a Ray worker runs: one reference build, or one evaluation, with the local engine unchanged.

An evaluation runs `evaluate_predictions` on a one-line predictions file in a scratch run
directory on the worker's node (the same code, sandbox and checks as `gpu2tpu evaluate`), then
returns the evaluation's folder as a tar archive for the driver to write into the real run
directory. Plain functions here; harness/ray_engine.py wraps them as Ray tasks.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from gpu2tpu.harness import node_facts
from gpu2tpu.harness.ref_store import ReferenceStore
from gpu2tpu.harness.references import ensure_references, reference_key
from gpu2tpu.record.report import evaluation_name
from gpu2tpu.record.targets import get_target
from gpu2tpu.tasks.finder import find_task

MIGRATED = "migrated"  # a migrated_dir prediction's tree, unpacked in the scratch folder


class NodeMismatch(Exception):
    """This node's copy of a task differs from the driver's: its verdicts would grade other code."""


def pack(folder: Path) -> bytes:
    """A folder as an uncompressed tar archive (links kept as links; .git left out)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname=".",
                filter=lambda info: None if ".git" in Path(info.name).parts else info)
    return buf.getvalue()


def unpack(data: bytes, dest: Path) -> None:
    """Extract an archive from `pack`, refusing members that leave `dest` (tarfile's data filter)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(str(dest), filter="data")


def _spec(task_id: str, task_hash: str):
    spec = find_task(task_id)
    if spec.content_hash != task_hash:
        raise NodeMismatch(f"task {task_id} on this node has content hash {spec.content_hash[:12]}, "
                           f"the driver's is {task_hash[:12]}: install the same gpu2tpu and task "
                           "folders on every node")
    return spec


def build_references(task_id: str, task_hash: str, target_name: str,
                     store_url: str | None) -> dict[str, Any]:
    """Build (or find) the task's reference bundle on this node and publish it to the store."""
    spec = _spec(task_id, task_hash)
    target = get_target(target_name)
    messages: list[str] = []
    store = ReferenceStore(store_url) if store_url else None
    if store is not None:
        store.fetch(task_id, reference_key(spec, target))
    key, bundle = ensure_references(spec, target, messages.append)
    if store is not None:
        store.publish(bundle)
    return {"key": key, "bundle": str(bundle), "messages": messages, "node": _node()}


def _node() -> dict[str, Any]:
    """This host's facts, and the Ray node it is (the same host may hold several)."""
    import ray

    return {**node_facts.detect(), "ray_node_id": ray.get_runtime_context().get_node_id()}


def evaluate_one(job: dict[str, Any]) -> dict[str, Any]:
    """Grade one prediction here. `job`: line (the prediction's JSON), task_hash, reference_key,
    run_id, target, timeout_s, unsafe, store, tree (a migrated_dir's archive or None), previous
    (the evaluation's folder from an earlier run, or None: its report is reused when its cache key
    still matches)."""
    from gpu2tpu.harness.evaluate import evaluate_predictions

    line = dict(job["line"])
    spec = _spec(line["task_id"], job["task_hash"])
    key = reference_key(spec, get_target(job["target"]))
    if key != job["reference_key"]:
        raise NodeMismatch(f"{spec.task_id}: this node keys its references {key}, the references were "
                           f"built as {job['reference_key']}: its torch, torch_xla, Python or "
                           "reference device differ from the node that built them, so it would "
                           "grade against other references; give every node the same image")
    scratch = Path(tempfile.mkdtemp(prefix="gpu2tpu-ray-"))
    try:
        if job.get("store"):
            ReferenceStore(job["store"]).fetch(spec.task_id, key)
        if job.get("tree") is not None:
            unpack(job["tree"], scratch / MIGRATED)
            line["migrated_dir"] = str(scratch / MIGRATED)
        label = evaluation_name(line["agent"], line["task_id"], int(line.get("attempt") or 1))
        runs = scratch / "runs"
        if job.get("previous") is not None:
            unpack(job["previous"], runs / job["run_id"] / label)
        preds = scratch / "prediction.jsonl"
        preds.write_text(json.dumps(line) + "\n")
        summary = evaluate_predictions(preds, job["run_id"], runs, target_name=job["target"],
                                       timeout_s=job.get("timeout_s"), unsafe=bool(job.get("unsafe")))
        folder = runs / job["run_id"] / label
        if summary["errors"] or not (folder / "report.json").is_file():
            raise RuntimeError(f"{label}: the evaluation wrote no report ({'; '.join(summary['errors'])})")
        return {"files": pack(folder), "node": _node()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
