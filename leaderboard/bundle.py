"""Verified submissions: a bundle of predictions the maintainers re-execute themselves.

`pack` (gpu2tpu submit --predictions) writes one .tar.gz: bundle.json (metadata entries, versions,
sha256 of every member), predictions.jsonl, migrated trees under trees/ and trajectories under
trajectories/. `verify` (gpu2tpu leaderboard verify) unpacks it safely, runs `gpu2tpu evaluate` on
the maintainers' machine and stores the result as `verified`: nothing the submitter graded, hashed
or measured is used, only what they predicted.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.harness.report import hash_file
from gpu2tpu.leaderboard.runfiles import SubmissionRefused, load_entries

BUNDLE_FORMAT = 1
MANIFEST = "bundle.json"
PREDICTIONS = "predictions.jsonl"
MAX_MEMBER_BYTES = 256 << 20


def pack(predictions: Path, metadata: Path, out: Path) -> dict[str, Any]:
    """Write bundle `out` from a predictions file and its metadata; returns the manifest."""
    from gpu2tpu import __version__
    from gpu2tpu.corpus import revision

    predictions, metadata, out = (Path(p).expanduser().absolute() for p in (predictions, metadata, out))
    entries = load_entries(metadata)
    if not predictions.is_file():
        raise SubmissionRefused(f"predictions file {predictions} does not exist")
    lines = []
    files: dict[str, Path] = {}
    agents = {str(e["agent"]) for e in entries}
    for n, text in enumerate(predictions.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SubmissionRefused(f"{predictions.name} line {n} is not JSON: {exc}") from exc
        if raw.get("agent") not in agents:
            raise SubmissionRefused(f"{predictions.name} line {n}: agent {raw.get('agent')!r} has "
                                    f"no entry in {metadata.name} (entries: {sorted(agents)})")
        for key, folder in (("migrated_dir", "trees"), ("trajectory", "trajectories")):
            if isinstance(raw.get(key), str):
                src = Path(raw[key]).expanduser()
                src = src if src.is_absolute() else predictions.parent / src
                if not src.exists():
                    raise SubmissionRefused(f"{predictions.name} line {n}: {key} {raw[key]} is missing")
                member = f"{folder}/{n}" + ("" if src.is_dir() else src.suffix)
                files[member] = src
                raw[key] = member
        lines.append(json.dumps(raw, sort_keys=True))
    if not lines:
        raise SubmissionRefused(f"{predictions.name} holds no predictions")
    blobs = {PREDICTIONS: ("\n".join(lines) + "\n").encode()}
    manifest: dict[str, Any] = {
        "bundle_format": BUNDLE_FORMAT, "schema_version": 1, "harness_version": __version__,
        "corpus_revision": revision(), "metadata": entries, "predictions": len(lines), "sha256": {},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for name, data in blobs.items():
            _add_bytes(tar, name, data)
            manifest["sha256"][name] = _sha_bytes(data)
        for member, src in sorted(files.items()):
            for path in sorted([src, *src.rglob("*")] if src.is_dir() else [src]):
                if path.is_symlink() or not (path.is_file() or path.is_dir()):
                    raise SubmissionRefused(f"{path}: links and special files cannot be bundled")
                name = member + ("/" + path.relative_to(src).as_posix() if path != src else "")
                tar.add(path, arcname=name, recursive=False)
                if path.is_file():
                    manifest["sha256"][name] = hash_file(path)
        _add_bytes(tar, MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
    tmp.replace(out)
    return manifest


def unpack(bundle: Path, dest: Path) -> dict[str, Any]:
    """Extract a bundle into `dest`, refusing links, escapes, oversized or unlisted members."""
    bundle = Path(bundle).expanduser()
    if not bundle.is_file():
        raise SubmissionRefused(f"bundle {bundle} does not exist")
    try:
        tar = tarfile.open(bundle, "r:gz")
    except (tarfile.TarError, OSError) as exc:
        raise SubmissionRefused(f"{bundle.name} is not a gpu2tpu bundle (.tar.gz): {exc}") from exc
    with tar:
        members = tar.getmembers()
        for m in members:
            parts = Path(m.name).parts
            if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
                raise SubmissionRefused(f"{bundle.name}: member {m.name!r} is a link, special "
                                        "file or escapes the bundle")
            if m.size > MAX_MEMBER_BYTES:
                raise SubmissionRefused(f"{bundle.name}: member {m.name} is over {MAX_MEMBER_BYTES} bytes")
        tar.extractall(dest, filter="data")
    manifest_path = dest / MANIFEST
    if not manifest_path.is_file():
        raise SubmissionRefused(f"{bundle.name} has no {MANIFEST}; pack it with gpu2tpu submit --predictions")
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("bundle_format") != BUNDLE_FORMAT:
        raise SubmissionRefused(f"{bundle.name}: bundle_format {manifest.get('bundle_format')!r}, "
                                f"this gpu2tpu reads {BUNDLE_FORMAT}")
    listed = dict(manifest.get("sha256") or {})
    present = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} - {MANIFEST}
    if present != set(listed):
        raise SubmissionRefused(f"{bundle.name}: members and manifest disagree "
                                f"({sorted(present ^ set(listed))[:3]})")
    for name, sha in listed.items():
        if hash_file(dest / name) != sha:
            raise SubmissionRefused(f"{bundle.name}: {name} differs from its manifest sha256")
    return manifest


def verify(bundle: Path, db: Path, runs_root: Path | None = None, workers: int = 1) -> Any:
    """Re-execute a bundle's predictions here and store the outcome as verified."""
    from gpu2tpu.harness.evaluate import evaluate_predictions
    from gpu2tpu.leaderboard.ingest import VERIFIED, submit

    with tempfile.TemporaryDirectory(prefix="gpu2tpu-verify-") as tmp:
        work = Path(tmp) / "bundle"
        manifest = unpack(bundle, work)
        entries = manifest.get("metadata")
        if not isinstance(entries, list) or not entries:
            raise SubmissionRefused(f"{Path(bundle).name}: {MANIFEST} holds no metadata entries")
        meta = Path(tmp) / "metadata.yaml"
        meta.write_text(yaml.safe_dump({"agents": entries}))
        run_id = "verify-" + hash_file(Path(bundle).expanduser())[:16]
        root = Path(runs_root).expanduser() if runs_root else Path(tmp) / "runs"
        summary = evaluate_predictions(work / PREDICTIONS, run_id, root, workers=workers)
        if not summary.get("evaluations"):
            raise SubmissionRefused(f"{Path(bundle).name}: no prediction could be evaluated: "
                                    f"{summary.get('errors')}")
        _attach_trajectories(work, root / run_id)
        result = submit(root / run_id, meta, db, trust=VERIFIED)
        if runs_root is None:
            shutil.rmtree(root, ignore_errors=True)
        return result


def _attach_trajectories(work: Path, run_dir: Path) -> None:
    """Copy each prediction's trajectory next to its evaluation (for the page's links)."""
    from gpu2tpu.harness.report import evaluation_name

    for text in (work / PREDICTIONS).read_text().splitlines():
        raw = json.loads(text)
        src = work / str(raw.get("trajectory") or "")
        if raw.get("trajectory") and src.is_file():
            dest = run_dir / evaluation_name(raw["agent"], raw["task_id"], int(raw.get("attempt") or 1))
            if dest.is_dir():
                shutil.copyfile(src, dest / "trajectory.json")


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _sha_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
