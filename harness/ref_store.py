"""A reference store every node of a cluster can reach: sealed reference bundles, shared by
content key.

A bundle is the folder `ensure_references` builds in the local cache (`<task>-<key>/`, with its
manifest of hashes) plus its seal beside it (`<task>-<key>.seal`). The store holds the same two
things under an fsspec URL (`gs://bucket/refs`, `s3://...`, `hf://...`, or a plain directory), so
a bundle built once on one node is fetched by the others instead of rebuilt.

Nothing here is trusted on its own: a fetched bundle lands in the local cache exactly as a built
one would, and `ensure_references` checks it the same way before any use (every file against the
manifest, the manifest against the seal, under the key every node of the cluster shares:
`GPU2TPU_SEAL_KEY_FILE`). A bundle that fails those checks is rebuilt locally. Only the engine
writes the store; no sandboxed process sees it (the sandbox mounts an allow-list, and the store's
credentials stay in the node's environment, which graded code never inherits).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.harness.references import bundle_dir, usable
from gpu2tpu.record.execution import COMPLETE, MANIFEST, verify_manifest
from gpu2tpu.record.sealed import seal_path


def local_bundle(task_id: str, key: str) -> Path:
    """Where `ensure_references` keeps a bundle in this node's cache."""
    return bundle_dir(task_id, key)


class ReferenceStore:
    """Sealed reference bundles under one fsspec URL or directory."""

    def __init__(self, url: str):
        try:
            import fsspec
        except ImportError as exc:  # pragma: no cover - fsspec comes with `datasets`
            raise UserError("a reference store needs fsspec: pip install fsspec") from exc
        self.url = url
        try:
            self.fs, root = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as exc:
            raise UserError(f"reference store {url!r}: {exc} (install the fsspec filesystem for "
                            "its scheme, e.g. gcsfs for gs://, s3fs for s3://)") from exc
        self.root = root.rstrip("/")

    def _path(self, *parts: str) -> str:
        return "/".join([self.root, *parts])

    def has(self, name: str) -> bool:
        """Is a whole bundle `name` (`<task>-<key>`) in the store? Its seal is written last."""
        return bool(self.fs.exists(self._path(name + ".seal")))

    def publish(self, bundle: Path) -> bool:
        """Upload a complete, verified local bundle and then its seal; False when the bundle is
        incomplete (a failed reference build is never shared) or already stored."""
        name = bundle.name
        if not (bundle / COMPLETE).exists() or verify_manifest(bundle) is None or self.has(name):
            return False
        files = sorted(p for p in bundle.rglob("*") if p.is_file())
        for path in files:
            remote = self._path(name, path.relative_to(bundle).as_posix())
            self.fs.makedirs(remote.rsplit("/", 1)[0], exist_ok=True)
            self.fs.put_file(str(path), remote)
        self.fs.put_file(str(seal_path(bundle)), self._path(name + ".seal"))
        return True

    def fetch(self, task_id: str, key: str) -> Path | None:
        """Copy bundle `<task_id>-<key>` into this node's cache unless a sealed copy is already
        there; returns its local path, or None when the store lacks it or the copy does not pass
        the checks `ensure_references` applies (it then builds the bundle itself)."""
        dest = local_bundle(task_id, key)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(str(dest) + ".lock", "w") as lock:  # the lock ensure_references takes
            fcntl.flock(lock, fcntl.LOCK_EX)
            if usable(dest):
                return dest
            if not self.has(dest.name):
                return None
            incoming = dest.with_name(dest.name + ".fetching")
            if not self.download(dest.name, incoming):
                return None
            shutil.rmtree(dest, ignore_errors=True)
            os.replace(incoming, dest)
            self.fs.get_file(self._path(dest.name + ".seal"), str(seal_path(dest)))
            return dest if usable(dest) else None

    def download(self, name: str, incoming: Path) -> bool:
        """Copy the files bundle `name`'s manifest lists (and the manifest) into `incoming`, a
        fresh folder; False (and nothing left) when it names a path outside the bundle. Checks
        nothing else: the caller verifies what arrived."""
        shutil.rmtree(incoming, ignore_errors=True)
        incoming.mkdir(parents=True)
        manifest = self._read_json(self._path(name, MANIFEST))
        for rel in [*manifest.get("files", {}), MANIFEST]:
            target = incoming / rel
            if ".." in Path(rel).parts or Path(rel).is_absolute():
                shutil.rmtree(incoming, ignore_errors=True)
                return False
            target.parent.mkdir(parents=True, exist_ok=True)
            self.fs.get_file(self._path(name, rel), str(target))
        return True

    def _read_json(self, remote: str) -> dict[str, Any]:
        with self.fs.open(remote, "rb") as fh:
            data = json.loads(fh.read())
        return data if isinstance(data, dict) else {}
