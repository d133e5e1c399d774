"""The one execution primitive for untrusted code: candidate runs, evaluate.py, the agent's commands.

Built on bubblewrap (`bwrap`): a read-only view of the whole system, one writable directory, a
private /tmp, no network, its own PID namespace (every descendant, double-forked daemons included,
ends when the command's main process ends, normal exit included), an allow-listed environment,
paths the code must not see covered by empty tmpfs mounts, and resource limits (file size,
processes, optional address space). Output is read through pipes by this supervisor and truncated
past a limit; an optional extra pipe (`channel`) carries the probe's trace out of the sandbox.

Without bwrap nothing runs unless the caller passes unsafe=True (`--unsafe-no-sandbox`); the
run then records `sandbox: none`.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gpu2tpu.errors import UserError

BWRAP = "bwrap"
# Variables a sandboxed process may inherit from the caller; everything else is dropped.
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ", "TERM",
             "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# Accelerator device nodes passed into the sandbox when present (TPU VMs); nothing else of /dev.
ACCEL_DEVICES = ("/dev/accel0", "/dev/accel1", "/dev/accel2", "/dev/accel3", "/dev/vfio")
MiB = 1024 * 1024


class SandboxUnavailable(UserError):
    """bwrap is missing or does not work here and the caller did not accept running unsandboxed."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    output_bytes: int = 16 * MiB  # per stream (stdout, stderr, channel)
    file_bytes: int = 4096 * MiB  # RLIMIT_FSIZE: largest file the code may write
    processes: int = 4096  # RLIMIT_NPROC (not enforced for root outside a user namespace)
    memory_bytes: int | None = None  # RLIMIT_AS; XLA reserves large address ranges, off by default
    term_grace_s: float = 10.0  # SIGTERM first (the probe writes its end record), then SIGKILL


@dataclass(frozen=True)
class Confinement:
    writable: Sequence[Path]  # bound read-write (the workspace); everything else is read-only
    hide: Sequence[Path] = ()  # covered by empty tmpfs (directories) or /dev/null (files)
    reveal: Sequence[Path] = ()  # read-only again inside a hidden folder (the interpreter in $HOME)
    unsafe: bool = False  # run without the sandbox when bwrap is missing (recorded by the caller)


@dataclass
class Outcome:
    exit_code: int
    timed_out: bool
    wall_s: float
    sandbox: str  # "bwrap" or "none"
    truncated: list[str] = field(default_factory=list)  # streams cut at the output limit
    cpu_s: float | None = None  # user + system seconds of the whole run (None: stopped at its limit)
    others_share: float | None = None  # share of the machine's CPU that other processes used meanwhile


class Observer(Protocol):
    """Watches a run from outside it (harness/kernel_view.py): told the started process's pid,
    then the run's process tree (root first) at every sample, then that the run ended."""

    def started(self, pid: int) -> None: ...

    def sample(self, pids: list[int]) -> None: ...

    def finished(self) -> None: ...


_AVAILABLE: dict[str, bool] = {}


def available() -> bool:
    """Whether bwrap is installed and can create its namespaces here (checked once)."""
    if BWRAP not in _AVAILABLE:
        path = shutil.which(BWRAP)
        ok = False
        if path:
            try:
                ok = subprocess.run([path, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
                                     "--proc", "/proc", "true"], capture_output=True,
                                    timeout=30).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
        _AVAILABLE[BWRAP] = ok
    return _AVAILABLE[BWRAP]


def require(unsafe: bool) -> str:
    """'bwrap' when the sandbox works; 'none' when it does not and `unsafe` was given; else raise."""
    if available():
        return "bwrap"
    if unsafe:
        return "none"
    raise SandboxUnavailable(
        "bubblewrap (bwrap) is missing or cannot create namespaces here, and untrusted code is "
        "only run inside it: install it (Debian/Ubuntu: apt-get install -y bubblewrap) or pass "
        "--unsafe-no-sandbox to run unconfined (the report then says sandbox: none and the "
        "leaderboard refuses the run)")


def sandbox_env(extra: Mapping[str, str], home: str = "/tmp") -> dict[str, str]:
    """The allow-listed environment: a few locale/path variables, then `extra` (device settings)."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": home, "TMPDIR": "/tmp", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    # idle OpenMP threads sleep instead of spinning: on a busy machine, spinning threads multiplied
    # an eager CPU run's wall and CPU time by 4-6 (benchmarks/omp_wait_policy.py), and the CPU time
    # is what tells a busy machine from a slow migration
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    env.update(extra)
    return env


def bwrap_argv(argv: Sequence[str], cwd: Path, env: Mapping[str, str], box: Confinement,
               keep_fds: Sequence[int] = ()) -> list[str]:
    """The bwrap command line that runs `argv` confined as `box` says."""
    cmd = [shutil.which(BWRAP) or BWRAP, "--unshare-all", "--die-with-parent", "--new-session",
           "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
           "--tmpfs", "/dev/shm"]
    for dev in ACCEL_DEVICES:
        if os.path.exists(dev):
            cmd += ["--dev-bind", dev, dev]
    writable = [Path(os.path.abspath(w)) for w in box.writable]
    mounts: list[tuple[Path, list[str]]] = []
    for hidden in box.hide:
        p = Path(os.path.abspath(hidden))
        if p.exists() and p not in writable:
            mounts.append((p, ["--tmpfs", str(p)] if p.is_dir() else ["--ro-bind", "/dev/null", str(p)]))
    mounts += [(Path(r), ["--ro-bind", str(r), str(r)]) for r in box.reveal if os.path.exists(r)]
    mounts += [(w, ["--bind", str(w), str(w)]) for w in writable]
    # outer paths first: a workspace inside a hidden folder is bound back on top of its tmpfs, a
    # hidden folder inside the workspace (the run's output directory) is covered after the bind
    for _, args in sorted(mounts, key=lambda m: len(m[0].parts)):
        cmd += args
    for p, args in mounts:  # the covering tmpfs become read-only once everything is mounted
        if args[0] == "--tmpfs":
            cmd += ["--remount-ro", str(p)]
    cmd += ["--clearenv"]
    for k, v in env.items():
        cmd += ["--setenv", k, v]
    cmd += ["--chdir", str(cwd), "--", *argv]
    return cmd


def _limits(limits: Limits):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    return apply


def _drain(src, dest, cap: int, name: str, cut: list[str]) -> None:
    """Copy `src` into `dest` up to `cap` bytes, then keep reading (and dropping) until EOF."""
    written = 0
    while chunk := src.read1(1 << 16) if hasattr(src, "read1") else src.read(1 << 16):
        if written < cap:
            part = chunk[:cap - written]
            dest.write(part)
            written += len(part)
            if written >= cap:
                cut.append(name)
                dest.write(f"\n[gpu2tpu: {name} truncated at {cap} bytes]\n".encode())
            dest.flush()
    src.close()


def run(argv: Sequence[str], cwd: Path, env: Mapping[str, str], box: Confinement, limits: Limits,
        stdout: Path, stderr: Path | None, channel: Path | None = None,
        observer: Observer | None = None) -> Outcome:
    """Run `argv` confined; stdout/stderr (stderr None: merged into stdout) land in files here.

    With `channel`, the child inherits a pipe's write end (its number is in GPU2TPU_CHANNEL_FD)
    and what it writes there lands in `channel`: the probe's trace, written outside the sandbox.
    With `observer`, the run's process tree is shown to it at every sample (every 0.25 s)."""
    mode = require(box.unsafe)
    read_fd = write_fd = -1
    env = dict(env)
    if channel is not None:
        read_fd, write_fd = os.pipe()
        env["GPU2TPU_CHANNEL_FD"] = str(write_fd)
    cmd = bwrap_argv(argv, cwd, env, box) if mode == "bwrap" else list(argv)
    start = time.monotonic()
    cut: list[str] = []
    out_f = open(stdout, "wb")
    err_f = open(stderr, "wb") if stderr is not None else None
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env if mode == "none" else _host_env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if stderr is not None else subprocess.STDOUT,
                                pass_fds=(write_fd,) if channel is not None else (),
                                start_new_session=True, preexec_fn=_limits(limits))
    except BaseException:
        out_f.close()
        if err_f:
            err_f.close()
        if channel is not None:
            os.close(read_fd)
            os.close(write_fd)
        raise
    threads = [threading.Thread(target=_drain, args=(proc.stdout, out_f, limits.output_bytes,
                                                     "stdout", cut), daemon=True)]
    if stderr is not None and err_f is not None:
        threads.append(threading.Thread(target=_drain, args=(proc.stderr, err_f, limits.output_bytes,
                                                             "stderr", cut), daemon=True))
    chan_f = None
    if channel is not None:
        os.close(write_fd)
        chan_f = open(channel, "wb")
        threads.append(threading.Thread(target=_drain, args=(os.fdopen(read_fd, "rb"), chan_f,
                                                             limits.output_bytes, "channel", cut),
                                        daemon=True))
    for t in threads:
        t.start()
    if observer is not None:
        observer.started(proc.pid)
    timed_out, cpu_s, others = False, None, None
    try:
        code, cpu_s, others = _wait_with_usage(proc, limits.timeout_s, observer)
    except subprocess.TimeoutExpired:
        timed_out = True
        code = _stop(proc, limits.term_grace_s)
    if mode == "none":  # no PID namespace: at least end the process group
        _signal_group(proc.pid, signal.SIGKILL)
    for t in threads:  # the namespace is gone, so every write end is closed
        t.join(timeout=30)
    for f in (out_f, err_f, chan_f):
        if f is not None:
            f.close()
    if observer is not None:
        observer.finished()
    return Outcome(exit_code=code, timed_out=timed_out, wall_s=time.monotonic() - start,
                   sandbox=mode, truncated=cut, cpu_s=cpu_s, others_share=others)


def _wait_with_usage(proc: subprocess.Popen, timeout: float,
                     observer: Observer | None = None) -> tuple[int, float, float | None]:
    """proc.wait(timeout), also returning the run's CPU seconds (user + system), sampled from /proc
    for the child and every process below it while it runs (bwrap's own rusage does not include
    the sandboxed tree; without the sandbox the child is the command itself; each process counted
    once, so no parent's children-time). Sampling every 0.25 s misses at most that much of each
    process's last moments. Third: the share of the whole machine's CPU capacity that processes
    outside the run used meanwhile (/proc/stat less the run's own), which tells a machine others
    keep busy from a run that waits or makes its own load."""
    deadline, ticks = time.monotonic() + timeout, os.sysconf("SC_CLK_TCK")
    seen: dict[int, int] = {}
    machine_start = _machine_cpu()
    while True:
        try:
            code = proc.wait(timeout=min(0.25, max(0.0, deadline - time.monotonic())))
            own = sum(seen.values())
            return code, own / ticks, _others_share(machine_start, _machine_cpu(), own)
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
        tree = [proc.pid, *_descendants(proc.pid)]
        if observer is not None:
            observer.sample(tree)
        for pid in tree:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            seen[pid] = max(seen.get(pid, 0), int(fields[11]) + int(fields[12]))  # utime + stime


def _machine_cpu() -> tuple[int, int] | None:
    """(busy, total) clock ticks of every CPU of the machine since boot; None where unreadable."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    return sum(fields) - fields[3] - fields[4], sum(fields)  # all but idle and iowait; user ... steal


def _others_share(start: tuple[int, int] | None, end: tuple[int, int] | None, own: int) -> float | None:
    if start is None or end is None or end[1] <= start[1]:
        return None
    return round(min(1.0, max(0.0, (end[0] - start[0] - own) / (end[1] - start[1]))), 3)


def _host_env() -> dict[str, str]:
    """bwrap itself needs only PATH; the child's environment is set with --clearenv/--setenv."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _descendants(root: int) -> list[int]:
    """Every process below `root` (read from /proc), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _stop(proc: subprocess.Popen, grace: float) -> int:
    """At the time limit: SIGTERM every process of the run (the probe writes its end record), then
    SIGKILL bwrap, whose PID namespace takes every remaining process with it."""
    for pid in _descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    for pid in [proc.pid, *_descendants(proc.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _signal_group(proc.pid, signal.SIGKILL)
    return proc.wait()


def require_sandboxed(report: Mapping) -> None:
    """For the leaderboard: refuse a report whose candidate ran without the sandbox (or predates it)."""
    mode = (report.get("runtime") or {}).get("sandbox")
    if mode != "bwrap":
        raise UserError(f"{report.get('agent')}/{report.get('task_id')}: graded with sandbox "
                        f"{mode or 'unrecorded'}; only runs graded inside bubblewrap are accepted "
                        "(install bubblewrap and evaluate again without --unsafe-no-sandbox)")
