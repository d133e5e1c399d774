"""Verified submissions: a bundle of predictions the maintainers re-execute themselves.

`pack` (gpu2tpu submit --predictions) writes one .tar.gz: bundle.json (metadata entries, versions,
sha256 of every member), predictions.jsonl, migrated trees under trees/ and trajectories under
trajectories/. `verify` (gpu2tpu leaderboard verify) unpacks it safely (caps on members and bytes, no links,
absolute or escaping names), checks every name (agent, model, organisation) before anything runs,
runs `gpu2tpu evaluate` on the maintainers' machine and stores the result as `verified`: nothing the
submitter graded, hashed or measured is used, only what they predicted.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import Any, cast

import yaml

from gpu2tpu.harness.engine import Engine
from gpu2tpu.leaderboard.runfiles import SubmissionRefused, load_entries
from gpu2tpu.leaderboard.safetext import UnsafeName, check_name
from gpu2tpu.record.report import hash_file

BUNDLE_FORMAT = 1
MANIFEST = "bundle.json"
PREDICTIONS = "predictions.jsonl"
MAX_MEMBER_BYTES = 256 << 20  # one file
MAX_TOTAL_BYTES = 4 << 30  # everything, uncompressed
MAX_MEMBERS = 50_000  # files and directories


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
        if not isinstance(raw, dict) or raw.get("agent") not in agents:
            agent = raw.get("agent") if isinstance(raw, dict) else None
            raise SubmissionRefused(f"{predictions.name} line {n}: agent {agent!r} has "
                                    f"no entry in {metadata.name} (entries: {sorted(agents)})")
        _check_model(raw, f"{predictions.name} line {n}")
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
    _scan(bundle)  # every header checked, before a byte is written
    with tarfile.open(bundle, "r:gz") as tar:
        tar.extractall(dest, filter="data")
    manifest_path = dest / MANIFEST
    if not manifest_path.is_file():
        raise SubmissionRefused(f"{bundle.name} has no {MANIFEST}; pack it with gpu2tpu submit --predictions")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SubmissionRefused(f"{bundle.name}: {MANIFEST} is not JSON: {exc}") from exc
    if not isinstance(manifest, dict):
        raise SubmissionRefused(f"{bundle.name}: {MANIFEST} is not a JSON object")
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


def _scan(bundle: Path) -> None:
    """One streaming pass over the headers that stops at the first member past a cap; it reads at
    most MAX_TOTAL_BYTES (plus headers) of decompressed data, so a gzip bomb stops early."""
    name, count, total = bundle.name, 0, 0
    try:
        with gzip.open(bundle) as raw, tarfile.open(
            fileobj=cast(Any, _Capped(raw, _stream_cap(), name)), mode="r|"
        ) as tar:
            for m in tar:
                count += 1
                total += m.size
                if count > MAX_MEMBERS:
                    raise SubmissionRefused(f"{name} holds more than {MAX_MEMBERS} members; "
                                            "bundle fewer files (e.g. patches, not whole trees)")
                if not m.name.isprintable():
                    raise SubmissionRefused(f"{name}: member {m.name!r} has a control character "
                                            "in its name")
                if m.name.startswith("/") or ".." in Path(m.name).parts:
                    raise SubmissionRefused(f"{name}: member {m.name!r} is absolute or escapes "
                                            "the bundle with '..'")
                if m.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE):
                    raise SubmissionRefused(f"{name}: member {m.name!r} is a link or special "
                                            "file; a bundle holds only files and directories")
                if m.size > MAX_MEMBER_BYTES:
                    raise SubmissionRefused(f"{name}: member {m.name} is over {MAX_MEMBER_BYTES} "
                                            "bytes")
                if total > MAX_TOTAL_BYTES:
                    raise SubmissionRefused(f"{name} unpacks to more than {MAX_TOTAL_BYTES} bytes; "
                                            "bundle less (no data sets or checkpoints)")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise SubmissionRefused(f"{name} is not a gpu2tpu bundle (.tar.gz): {exc}") from exc


def _stream_cap() -> int:
    """Decompressed bytes a bundle within the caps can take: its data, one header block and padding
    per member, and read-ahead; long names and pax records count against it."""
    return MAX_TOTAL_BYTES + MAX_MEMBERS * 1024 + (64 << 10)


class _Capped:
    """A read-only stream that refuses to go past `cap` bytes."""

    def __init__(self, raw: Any, cap: int, name: str) -> None:
        self.raw, self.left, self.name = raw, cap, name

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(self.left + 1 if size < 0 else min(size, self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise SubmissionRefused(f"{self.name} unpacks to more than {MAX_TOTAL_BYTES} bytes")
        return data


def _check_model(raw: dict[str, Any], where: str) -> None:
    """A prediction's `model` is free text the page would show: the same rule as the metadata's."""
    if raw.get("model") is not None:
        try:
            check_name("model", raw["model"])
        except UnsafeName as exc:
            raise SubmissionRefused(f"{where}: {exc}") from exc


def _check_names(work: Path, manifest: dict[str, Any], bundle: Path) -> Path:
    """Metadata entries and every prediction's agent and model, before anything runs; returns the
    metadata file written for `submit`."""
    entries = manifest.get("metadata")
    if not isinstance(entries, list) or not entries:
        raise SubmissionRefused(f"{bundle.name}: {MANIFEST} holds no metadata entries")
    meta = work.parent / "metadata.yaml"
    meta.write_text(yaml.safe_dump({"agents": entries}))
    try:
        agents = {str(e["agent"]) for e in load_entries(meta)}  # refuses unsafe names
    except SubmissionRefused as exc:
        raise SubmissionRefused(f"{bundle.name}: {exc}") from exc
    for n, text in enumerate((work / PREDICTIONS).read_text().splitlines(), 1):
        try:
            raw = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise SubmissionRefused(f"{bundle.name}: {PREDICTIONS} line {n} is not JSON: {exc}") from exc
        if raw and (not isinstance(raw, dict) or raw.get("agent") not in agents):
            raise SubmissionRefused(f"{bundle.name}: {PREDICTIONS} line {n} names an agent "
                                    f"without a metadata entry (entries: {sorted(agents)})")
        if raw:
            _check_model(raw, f"{bundle.name}: {PREDICTIONS} line {n}")
    return meta


def verify(bundle: Path, db: Path, runs_root: Path | None = None, workers: int = 1,
           engine: Engine | None = None) -> Any:
    """Re-execute a bundle's predictions (here, or on Ray) and store the outcome as verified."""
    from gpu2tpu.harness.engine import run_evaluations
    from gpu2tpu.leaderboard.ingest import VERIFIED, submit

    with tempfile.TemporaryDirectory(prefix="gpu2tpu-verify-") as tmp:
        work = Path(tmp) / "bundle"
        meta = _check_names(work, unpack(bundle, work), Path(bundle))
        run_id = "verify-" + hash_file(Path(bundle).expanduser())[:16]
        root = Path(runs_root).expanduser() if runs_root else Path(tmp) / "runs"
        summary = run_evaluations(work / PREDICTIONS, run_id, root, workers=workers, engine=engine)
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
    from gpu2tpu.record.report import evaluation_name

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
