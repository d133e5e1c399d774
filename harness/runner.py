"""Run one command under the probe: own working directory, time limit, process-group kill,
an environment stripped of secrets."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gpu2tpu.harness.targets import DEVICE_VARS

PROBE_FILE = Path(__file__).with_name("probe.py")
_SECRET = re.compile(r"(_API_KEY|_TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
_SECRET_PREFIXES = ("AWS_", "ANTHROPIC_", "OPENAI_", "GITHUB_", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
                    "GOOGLE_APPLICATION_CREDENTIALS")


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    timed_out: bool
    wall_s: float


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without secrets or device settings, plus `extra` (a target's or
    the reference device's variables)."""
    env = {k: v for k, v in os.environ.items()
           if not _SECRET.search(k) and not k.startswith(_SECRET_PREFIXES) and k not in DEVICE_VARS}
    env.update({"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra or {})
    return env


def provenance() -> dict[str, str]:
    """What every output file carries: the harness version and the corpus revision."""
    from gpu2tpu import __version__
    from gpu2tpu.corpus import revision

    return {"harness_version": __version__, "corpus_revision": revision()}


def run_probed(command: list[str], workdir: Path, out_dir: Path, env: dict[str, str],
               timeout_s: float, probe_dir: Path | None = None,
               save_model: Path | None = None) -> RunResult:
    """Run `command` inside `workdir` under the probe; trace and logs land in `out_dir`. The probe
    is copied into `probe_dir` (default: beside `workdir`), outside the project tree. With
    `save_model`, the probe saves the trained module's state_dict there when the script ends."""
    out_dir = Path(os.path.abspath(out_dir))  # the process runs in another working directory
    out_dir.mkdir(parents=True, exist_ok=True)
    probe = (probe_dir or workdir.parent) / "gpu2tpu_probe.py"
    shutil.copyfile(PROBE_FILE, probe)
    trace = out_dir / "trace.jsonl"
    trace.unlink(missing_ok=True)
    argv = [sys.executable, str(probe), "--out", str(trace), "--stamp", json.dumps(provenance()),
            *(["--save-model", str(save_model)] if save_model else []), "--", *command]
    return run_process(argv, workdir, out_dir, env, timeout_s)


def run_process(argv: list[str], cwd: Path, out_dir: Path, env: dict[str, str],
                timeout_s: float, log_name: str = "") -> RunResult:
    prefix = f"{log_name}." if log_name else ""
    start = time.monotonic()
    with open(out_dir / f"{prefix}stdout.log", "wb") as out, \
            open(out_dir / f"{prefix}stderr.log", "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            code = _kill_group(proc)
    return RunResult(exit_code=code, timed_out=timed_out, wall_s=time.monotonic() - start)


def _kill_group(proc: subprocess.Popen) -> int:
    """SIGTERM the whole process group (the probe writes its end record), then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            return proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()
