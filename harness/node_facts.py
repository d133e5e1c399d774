"""Where an evaluation ran: the host's hardware facts, written beside its report as `node.json`.

The engine (local or Ray) writes it, never the graded code. The leaderboard prices a TPU target by
the accelerator recorded here (`tpu` runs on whichever generation the host has).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

from gpu2tpu.record.report import read_json, write_json

NODE_FILE = "node.json"
# Cloud TPU hosts name their slice here (GKE sets the variable; TPU VMs serve the metadata key).
TPU_TYPE_ENV = "TPU_ACCELERATOR_TYPE"
_METADATA_URL = "http://metadata.google.internal/computeMetadata/v1/instance/attributes/accelerator-type"
# a slice type's prefix -> the generation the price table names (v5litepod is v5e)
_GENERATIONS = {"v2": "tpu-v2", "v3": "tpu-v3", "v4": "tpu-v4", "v5litepod": "tpu-v5e", "v5e": "tpu-v5e",
                "v5p": "tpu-v5p", "v6e": "tpu-v6e", "v7": "tpu-v7", "v7x": "tpu-v7"}


def tpu_generation(accelerator_type: str | None) -> str | None:
    """`v6e-8` -> `tpu-v6e`, `v5litepod-16` -> `tpu-v5e`; None for what is not a TPU slice type."""
    match = re.fullmatch(r"(v[0-9]+[a-z]*)-[0-9]+", (accelerator_type or "").strip().lower())
    return _GENERATIONS.get(match.group(1)) if match else None


def tpu_device_files() -> int:
    """How many TPU device files this host has (/dev/accel*: v2-v4; /dev/vfio/<n>: v5e and later)."""
    dev = Path("/dev")
    return len(list(dev.glob("accel[0-9]*"))) + len(list((dev / "vfio").glob("[0-9]*")))


def _metadata_accelerator_type() -> str | None:
    """Ask the GCE metadata server (only on a host with TPU device files; one short try)."""
    request = urllib.request.Request(_METADATA_URL, headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.read().decode().strip() or None
    except OSError:
        return None


def _gpus() -> list[str]:
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def detect(probe_metadata: bool = True) -> dict[str, Any]:
    """This host's facts: name, CPUs, memory, and its accelerator (a TPU generation, GPUs or none)."""
    tpu_type = os.environ.get(TPU_TYPE_ENV)
    chips = tpu_device_files()
    if not tpu_type and chips and probe_metadata:
        tpu_type = _metadata_accelerator_type()
    gpus = _gpus()
    generation = tpu_generation(tpu_type)
    facts: dict[str, Any] = {
        "schema_version": 1,
        "hostname": socket.gethostname(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "tpu_accelerator_type": tpu_type,
        "tpu_device_files": chips,
        "gpus": gpus,
        "accelerator": generation or (f"gpu-{_gpu_family(gpus[0])}" if gpus else "cpu"),
    }
    return facts


def _gpu_family(name: str) -> str:
    match = re.search(r"\b([AHBL][0-9]{2,3}|V100|T4)\b", name.upper())
    return match.group(1).lower() if match else re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def write(eval_dir: Path, facts: dict[str, Any], **extra: Any) -> None:
    write_json(eval_dir / NODE_FILE, {**facts, **extra})


def read(eval_dir: Path) -> dict[str, Any] | None:
    path = eval_dir / NODE_FILE
    if not path.is_file():
        return None
    try:
        return read_json(path)
    except Exception:
        return None
