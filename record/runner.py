"""Run one command under the probe, inside the sandbox (gpu2tpu.sandbox.process): its own writable
workspace, the grader's files hidden, the trace carried out through a pipe."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from gpu2tpu import sandbox
from gpu2tpu.sandbox.process import RunResult, confinement, run_process

PROBE_FILE = Path(__file__).with_name("probe.py")
# the probe's parts, copied beside it into a run's workspace as gpu2tpu_probe*.py
PROBE_FILES = (PROBE_FILE, *(Path(__file__).with_name(f"probe_{n}.py")
                             for n in ("counters", "hooks", "inputs", "calibration")))


def provenance() -> dict[str, str]:
    """What every output file carries: the harness version and the corpus revision."""
    from gpu2tpu import __version__
    from gpu2tpu.corpus import revision

    return {"harness_version": __version__, "corpus_revision": revision()}


def run_probed(command: list[str], workdir: Path, out_dir: Path, env: dict[str, str],
               timeout_s: float, hide: list[Path] | None = None, probe_dir: Path | None = None,
               save_model: Path | None = None, observer: sandbox.Observer | None = None) -> RunResult:
    """Run `command` inside `workdir` under the probe, sandboxed: only the workspace (`probe_dir`,
    default `workdir`'s parent) is writable; trace and logs land in `out_dir`, which the run cannot
    see. The probe is copied into the workspace, outside the project tree. With `save_model`, the
    probe saves the trained module's state_dict there when the script ends."""
    out_dir = Path(os.path.abspath(out_dir))  # the process runs in another working directory
    out_dir.mkdir(parents=True, exist_ok=True)
    probe = (probe_dir or workdir.parent) / "gpu2tpu_probe.py"
    for part in PROBE_FILES:
        shutil.copyfile(part, probe.with_name("gpu2tpu_" + part.name))
    trace = out_dir / "trace.jsonl"
    trace.unlink(missing_ok=True)
    argv = [sys.executable, str(probe), "--stamp", json.dumps(provenance()),
            *(["--save-model", str(save_model)] if save_model else []), "--", *command]
    box = confinement([probe_dir or workdir.parent], [out_dir, *(hide or [])])
    return run_process(argv, workdir, out_dir, env, timeout_s, box=box, channel=trace,
                       observer=observer)


