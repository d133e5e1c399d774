"""Kept evidence: each task's labelled runs from `gpu2tpu validate`, sealed in the cache beside the
reference bundles, so that a change under judge/ is re-validated by re-grading them, not by
running them again.

A kept suite is a run directory of its own (`<cache>/evidence/<task>-<key>/`: the task's
evaluations and the reference bundle they were graded against, as `validate` wrote them), with a
manifest of every file's hash and a seal beside it, as a reference bundle has. Its key covers what
produced the runs: the task's content hash (its migrations included), the recorder hash, the
target, the runtime and the sandbox; never the judge hash, since judging is what it is kept for.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from gpu2tpu import __version__, rooms
from gpu2tpu.cache import cache_root
from gpu2tpu.harness.references import bundle_digest
from gpu2tpu.record.execution import MANIFEST, runtime_versions, verify_manifest, write_manifest
from gpu2tpu.record.report import REPORT, read_json, write_json
from gpu2tpu.record.sealed import is_sealed, seal
from gpu2tpu.record.targets import Target
from gpu2tpu.tasks.spec import RunSpec

KEPT = "kept.json"  # what a kept suite holds: its key parts and its evaluations' reports


def key_parts(spec: RunSpec, target: Target, sandbox: str) -> dict[str, Any]:
    return {"task": spec.content_hash, "recorder": rooms.recorder_hash(), "target": target.name,
            "harness": __version__, "python": sys.version.split()[0], "sandbox": sandbox,
            **runtime_versions()}


def evidence_dir(spec: RunSpec, target: Target, sandbox: str) -> Path:
    digest = hashlib.sha256(json.dumps(key_parts(spec, target, sandbox), sort_keys=True).encode())
    return cache_root() / "evidence" / f"{spec.task_id}-{digest.hexdigest()[:16]}"


def digest(root: Path) -> str:
    """A kept suite's digest, as a reference bundle's: what validated.json pins."""
    return bundle_digest(root)


def keep(spec: RunSpec, target: Target, sandbox: str, run_dir: Path, reports: list[str]) -> dict[str, str]:
    """Copy the evaluations whose report.json paths (relative to `run_dir`) are `reports`, and the
    reference directories they name, into the cache as a sealed kept suite; returns its pin."""
    dest = evidence_dir(spec, target, sandbox)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(str(dest) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        building = dest.with_name(dest.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        refs = set()
        for rel in reports:
            shutil.copytree((run_dir / rel).parent, (building / rel).parent)
            refs.add(str(read_json(run_dir / rel).get("reference", {}).get("dir", "")))
        for ref in sorted(r for r in refs if r):
            shutil.copytree(run_dir / ref, building / ref)
        write_json(building / KEPT, {"schema_version": 1, "task_id": spec.task_id,
                                     "parts": key_parts(spec, target, sandbox),
                                     "reports": sorted(reports)})
        write_manifest(building)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(building, dest)
        seal(dest, (dest / MANIFEST).read_bytes())
    return {"key": dest.name.rsplit("-", 1)[1], "digest": digest(dest)}


def kept(spec: RunSpec, target: Target, sandbox: str) -> tuple[Path, list[str]] | None:
    """The kept suite of this task under this code and runtime, verified (manifest and seal), and
    its reports; None when there is none or it fails the checks (it is then run again)."""
    root = evidence_dir(spec, target, sandbox)
    if not (root / KEPT).is_file() or verify_manifest(root) is None or \
            not is_sealed(root, (root / MANIFEST).read_bytes()):
        return None
    facts = read_json(root / KEPT)
    if facts.get("task_id") != spec.task_id or facts.get("parts") != key_parts(spec, target, sandbox):
        return None  # sealed, but another task's or key's suite copied under this name
    reports = facts.get("reports")
    if not isinstance(reports, list) or not all(isinstance(r, str) and r.endswith(REPORT) for r in reports):
        return None
    return root, reports
