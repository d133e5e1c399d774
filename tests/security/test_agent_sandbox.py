"""The baseline agent's commands run in the same sandbox as graded code: no network, no cache,
home, runs or task copies visible, the install read-only, nothing left running afterwards."""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

from security_attacks import Listener, processes_with

from gpu2tpu.agent import commands
from gpu2tpu.cache import cache_root
from gpu2tpu.tasks import TASKS_DIR

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def _run(cmd: str, cwd: Path, hide: list[Path] | None = None) -> commands.CommandResult:
    return commands.run(["bash", "-c", cmd], cwd, 60, 20000, hide=hide or [], isolate=True)


def test_agent_commands_are_confined(tmp_path: Path) -> None:
    assert commands.namespace_available(), "bubblewrap is required (.ci/run installs it)"
    work = tmp_path / "work"
    work.mkdir()
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "gold-trace.jsonl").write_text("{}")
    cache_root().mkdir(parents=True, exist_ok=True)
    marker = cache_root() / f"marker-{uuid.uuid4().hex}"
    marker.write_text("reference")
    home_marker = Path(os.path.expanduser("~")) / f".gpu2tpu-marker-{uuid.uuid4().hex}"
    home_marker.write_text("home")
    listener = Listener()
    site = Path(sys.prefix) / "lib"
    try:
        res = _run(f"ls -A {cache_root()} {runs} {TASKS_DIR}; cat {home_marker}; "
                   f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", "
                   f"{listener.port}), timeout=3)' && echo NET-OK; "
                   f"touch {HARNESS}/owned.py && echo HARNESS-WRITABLE; "
                   f"touch {site}/owned && echo SITE-WRITABLE; "
                   "echo hello > mine.txt && cat mine.txt", work, hide=[runs])
    finally:
        listener.close()
        marker.unlink()
        home_marker.unlink()
    out = res.output
    assert "hello" in out and (work / "mine.txt").read_text() == "hello\n"  # its workspace works
    for leak in (marker.name, "gold-trace", "cifar_amp", "NET-OK", "HARNESS-WRITABLE",
                 "SITE-WRITABLE"):
        assert leak not in out, out
    assert "No such file" in out  # the home marker
    assert listener.connections == 0
    assert not (HARNESS / "owned.py").exists()


def test_agent_command_daemon_ends_with_the_command(tmp_path: Path) -> None:
    mark = f"gpu2tpu-agent-daemon-{uuid.uuid4().hex}"
    res = _run(f"setsid bash -c 'sleep 3600; true' {mark} >/dev/null 2>&1 & echo started", tmp_path)
    assert "started" in res.output and res.exit_code == 0
    time.sleep(0.5)
    assert processes_with(mark) == []
