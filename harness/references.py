"""Reference bundles for this node: the key a bundle is found by, the local cache (built once,
verified before every use), and the copy into a run directory. What a bundle's runs are and how
they are recorded is record/execution.py's `build_bundle`; where bundles come from is this
module's (and the reference store's, harness/ref_store.py)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu2tpu import __version__, rooms
from gpu2tpu.cache import cache_root
from gpu2tpu.errors import UserError
from gpu2tpu.record.execution import (
    COMPLETE,
    MANIFEST,
    build_bundle,
    reference_device,
    runtime_versions,
    verify_manifest,
)
from gpu2tpu.record.report import ReportError, read_json
from gpu2tpu.record.sealed import is_sealed, seal
from gpu2tpu.record.targets import Target
from gpu2tpu.sandbox import run_threads
from gpu2tpu.tasks.spec import RunSpec, task_tree_hash

Progress = Callable[[str], None]


def reference_inputs_hash(task_dir: Path) -> str:
    """The task files a reference bundle depends on: everything but the broken and alternative
    migrations, their labels and validated.json (editing those does not rebuild the references)."""
    return task_tree_hash(task_dir, lambda rel: rel.startswith(("migrations/broken/",
                                                                 "migrations/alternatives/")))


def reference_key_parts(spec: RunSpec, target: Target, device: str | None = None) -> dict[str, str | None]:
    """The facts a reference bundle is built from and keyed by (recorded in its `complete` file):
    the task's inputs, the recorder hash, the target and this node's runtime, the runs' thread
    count, and the device the original code ran on (`device`, default this node's: `cuda` where
    it has one, else `cpu`)."""
    return {"task": reference_inputs_hash(spec.task_dir), "target": target.name, "harness": __version__,
            "recorder": rooms.recorder_hash(), "threads": str(run_threads()),
            "python": sys.version.split()[0], "reference_device": device or reference_device(),
            **runtime_versions()}


def reference_key(spec: RunSpec, target: Target, device: str | None = None) -> str:
    parts = reference_key_parts(spec, target, device)
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def bundle_dir(task_id: str, key: str) -> Path:
    """Where this node's cache keeps bundle `key` of a task (built here, or pulled)."""
    return cache_root() / "references" / f"{task_id}-{key}"


def usable(root: Path) -> bool:
    """A cached bundle that built cleanly, still matches its manifest and seal, and is the bundle
    its name says: the key in its sealed `complete` file is the key in its folder's name (a sealed
    bundle copied under another task's or key's name is not)."""
    return (root / COMPLETE).exists() and verify_manifest(root) is not None and \
        is_sealed(root, (root / MANIFEST).read_bytes()) and built_as(root, root.name.rsplit("-", 1)[-1])


def built_as(root: Path, key: str) -> bool:
    """Whether the bundle's sealed `complete` file says it was built as `key`."""
    try:
        return read_json(root / COMPLETE).get("key") == key
    except ReportError:
        return False


def reference_devices(spec: RunSpec) -> list[str]:
    """The reference devices whose bundles this node uses, best first: the one the task's
    validation pinned, then CUDA (the device the study compares against), then its own. Only its
    own is ever built here; the others are used where a pulled copy is in the cache."""
    from gpu2tpu.harness import validated

    pin = (validated.read(spec) or {}).get("references")
    pinned = pin.get("reference_device") if isinstance(pin, dict) else None
    return list(dict.fromkeys(d for d in (pinned, "cuda", reference_device()) if isinstance(d, str)))


def ensure_references(spec: RunSpec, target: Target, progress: Progress) -> tuple[str, Path]:
    """The reference bundle for (task, runtime), built once and reused: keyed by content hash,
    written with a manifest of hashes and verified against it before every use (a bundle that
    does not match is rebuilt)."""
    for device in (d for d in reference_devices(spec) if d != reference_device()):  # pulled here
        key = reference_key(spec, target, device)
        if usable(bundle_dir(spec.task_id, key)):
            return key, bundle_dir(spec.task_id, key)
    key = reference_key(spec, target)
    root = bundle_dir(spec.task_id, key)
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(str(root) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / COMPLETE).exists():
            if usable(root):
                return key, root
            progress(f"{spec.task_id}: cached references at {root} do not match their sealed "
                     "manifest (changed after they were built): rebuilding them")
        shutil.rmtree(root, ignore_errors=True)
        building = root.with_name(root.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        build_bundle(spec, target, building, {"key": key, "parts": reference_key_parts(spec, target)},
                     progress)
        os.replace(building, root)
        seal(root, (root / MANIFEST).read_bytes())
    return key, root


def copy_references(cached: Path, dest: Path) -> dict[str, str]:
    """Copy a verified bundle into a run directory and verify the copy; returns its file hashes
    (recorded before any candidate runs). ValueError when the copy does not match; UserError when
    the run directory already holds another sound bundle of the same key (built before the cache
    was cleared): its reports were graded against that one, so the run needs a new run id."""
    if not (dest / COMPLETE).exists():
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(cached, dest)
    hashes, cached_hashes = verify_manifest(dest), verify_manifest(cached)
    if hashes is not None and cached_hashes is not None and hashes != cached_hashes:
        run_dir = dest.parent.parent
        raise UserError(f"{run_dir} already holds references {dest.name} built by an earlier run, "
                        f"not the ones now in the cache ({cached}), and its reports were graded "
                        f"against those: give a new --run-id (or delete {run_dir}) and run again")
    if hashes is None or hashes != cached_hashes:
        raise ValueError(f"references in {dest} differ from the verified cache {cached}: delete "
                         f"{dest} and evaluate again")
    return hashes


def bundle_pin(bundle: Path) -> dict[str, Any]:
    """What validated.json pins of the bundle a suite was graded against: its key, its digest
    (the SHA-256 of its manifest, which hashes every file) and the device its reference ran on."""
    facts = read_json(bundle / COMPLETE) if (bundle / COMPLETE).is_file() else {}
    return {"key": facts.get("key") or bundle.name, "digest": bundle_digest(bundle),
            "reference_device": (facts.get("parts") or {}).get("reference_device")}


def bundle_digest(bundle: Path) -> str:
    return hashlib.sha256((bundle / MANIFEST).read_bytes()).hexdigest()
