"""A real Ray cluster on this machine, for tests and benchmarks: a head and worker nodes, each a
`ray start --block` process in its own session, all on a loopback address.

Ray maps 127.0.0.1 to the host's routable address, so the nodes use 127.0.0.2 (loopback too).
Stopping ends every process the cluster started, by session: nothing outlives it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NODE_IP = "127.0.0.2"
_STARTED = "Ray runtime started"


def _ray_command() -> list[str]:
    beside = Path(sys.executable).with_name("ray")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("ray")
    if not found:
        raise RuntimeError("no `ray` command: pip install 'gpu2tpu[ray]'")
    return [found]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((NODE_IP, 0))
        return int(s.getsockname()[1])


class LoopbackCluster:
    """`with LoopbackCluster([{"CPU": 1, "TPU": 1}] * 2) as c: ... c.address ...`"""

    def __init__(self, workers: list[dict[str, float]], env: dict[str, str] | None = None,
                 start_timeout_s: float = 120):
        self.worker_resources = workers
        self.env = {**(env if env is not None else os.environ), "RAY_USAGE_STATS_ENABLED": "0"}
        self.start_timeout_s = start_timeout_s
        self.logs = Path(tempfile.mkdtemp(prefix="gpu2tpu-ray-cluster-"))
        self.port = _free_port()
        self.head: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes] | None] = []

    @property
    def address(self) -> str:
        return f"{NODE_IP}:{self.port}"

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("wb")
        proc = subprocess.Popen([*_ray_command(), "start", "--block", f"--node-ip-address={NODE_IP}",
                                 "--disable-usage-stats", "--object-store-memory=100000000", *args],
                                env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.start_timeout_s
        while _STARTED not in (self.logs / f"{name}.log").read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                text = (self.logs / f"{name}.log").read_text(errors="replace")[-2000:]
                self.stop()
                raise RuntimeError(f"Ray node {name} did not start:\n{text}")
            time.sleep(0.2)
        return proc

    def start(self) -> LoopbackCluster:
        self.head = self._start("head", ["--head", f"--port={self.port}", "--num-cpus=0",
                                         "--include-dashboard=false",
                                         f"--ray-client-server-port={_free_port()}"])
        for i, resources in enumerate(self.worker_resources):
            self.workers.append(self._start(f"worker{i}", [f"--address={self.address}",
                                                           *_resource_flags(resources)]))
        return self

    def __enter__(self) -> LoopbackCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def session_pids(self, proc: subprocess.Popen[bytes] | None) -> list[int]:
        """Every live process in a node's session (the node's daemons, workers and their children,
        except sandboxes, which start sessions of their own and die with their parent)."""
        if proc is None:
            return []
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if os.getsid(int(entry.name)) == proc.pid:
                        pids.append(int(entry.name))
                except OSError:
                    continue
        return pids

    def kill_worker(self, index: int) -> None:
        """Kill worker node `index` at once, as a lost machine would be (SIGKILL, whole session)."""
        proc = self.workers[index]
        if proc is not None:
            _kill_session(proc, signal.SIGKILL)
            proc.wait()
            self.workers[index] = None

    def stop(self) -> None:
        nodes = [p for p in [*self.workers, self.head] if p is not None]
        for proc in nodes:
            _kill_session(proc, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in nodes:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _kill_session(proc, signal.SIGKILL)
            proc.wait()
        self.workers, self.head = [], None
        shutil.rmtree(self.logs, ignore_errors=True)


def _kill_session(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _resource_flags(resources: dict[str, float]) -> list[str]:
    import json

    rest = {k: v for k, v in resources.items() if k not in ("CPU", "GPU")}
    flags = [f"--num-cpus={int(resources.get('CPU', 1))}"]
    if resources.get("GPU"):
        flags.append(f"--num-gpus={int(resources['GPU'])}")
    if rest:
        flags.append(f"--resources={json.dumps(rest)}")
    return flags


def main() -> None:  # pragma: no cover - a manual aid: python -m gpu2tpu.harness.ray_cluster
    with LoopbackCluster([{"CPU": 1, "TPU": 1}] * 2) as cluster:
        print(f"cluster at {cluster.address}; Ctrl-C ends it", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
