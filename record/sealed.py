"""What the harness trusts after a candidate ran: only what it copied or sealed before.

- Task sources: `evaluate.py` and whatever it imports are copied out of the task directory, and
  the directory checked against the task's content hash, before the candidate starts; the goal is
  measured from that copy, never from the task directory as it is afterwards.
- Reference bundles: `manifest.json` lists the hash of every file, and its seal (an HMAC of the
  manifest under a key kept outside the cache, `seal_key()`) sits outside the bundle's folder. A
  process able to rewrite a bundle and recompute its manifest still cannot make the seal match.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shutil
import tempfile
from pathlib import Path

from gpu2tpu.tasks import KIT_NAME, TASK_KIT

KEY_ENV = "GPU2TPU_SEAL_KEY_FILE"


class TaskChanged(Exception):
    """The task directory no longer matches the content hash it was loaded with."""


def key_file() -> Path:
    """$GPU2TPU_SEAL_KEY_FILE, else $XDG_STATE_HOME/gpu2tpu/seal.key (~/.local/state): outside
    the cache, which holds what the key seals."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV])
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state) / "gpu2tpu" / "seal.key"


def seal_key() -> bytes:
    """This install's sealing key, made on first use (32 random bytes, readable by its owner only)."""
    path = key_file()
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(32))
    try:
        os.link(tmp, path)  # the first writer wins; a concurrent one reads the winner's key
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_bytes()


def seal_path(bundle: Path) -> Path:
    return bundle.with_name(bundle.name + ".seal")


def seal(bundle: Path, manifest: bytes) -> None:
    """Write the seal of `manifest` (the bundle's manifest.json bytes) beside the bundle."""
    seal_path(bundle).write_text(hmac.new(seal_key(), manifest, hashlib.sha256).hexdigest())


def is_sealed(bundle: Path, manifest: bytes) -> bool:
    try:
        have = seal_path(bundle).read_text().strip()
    except OSError:
        return False
    return hmac.compare_digest(have, hmac.new(seal_key(), manifest, hashlib.sha256).hexdigest())


# evaluate.py's copy of the task: sources only (never bytecode, the migrations or checkpoints)
SOURCES_ONLY = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "migrations", ".git",
                                      "checkpoints")


def snapshot_sources(task_dir: Path, content_hash: str, task_hash) -> Path:
    """Copy the task's sources to a private folder after checking the task directory still has
    `content_hash` (`task_hash` computes it); returns the folder (the caller removes it)."""
    if content_hash and task_hash(task_dir) != content_hash:
        raise TaskChanged(f"{task_dir} changed after the task was loaded (its content hash "
                          "differs): evaluate again, with nothing writing to the task directory")
    dest = Path(tempfile.mkdtemp(prefix="gpu2tpu-task-")) / "task"
    shutil.copytree(task_dir, dest, ignore=SOURCES_ONLY)
    shutil.copyfile(TASK_KIT, dest / KIT_NAME)  # the kit evaluate.py imports
    return dest
