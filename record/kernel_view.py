"""What the kernel saw of a run, recorded from outside it (kernel.json): evidence the graded
process cannot write.

The sandbox (sandbox/__init__.py) shows an observer the run's process tree every 0.25 s. This one
reads, from /proc, each process's parent, executable and threads (CPU time per thread, first and
last seen), the code it has mapped (the XLA / TPU runtime libraries, identified by file identity,
not by name; anonymous executable mappings, which a JIT creates) and the device files it holds
open; and, where the kernel allows (record/perf_samples.py), it samples where every thread's CPU
time goes: each sample's instruction pointer is mapped to the code it was in (XLA's runtime, its
JIT code, PyTorch's eager kernels, the interpreter, the kernel, ...). A `ChipView` adds the
accelerator's own view where the hardware offers one. The criteria compare the result with the
gold migration's kernel view (judge/kernel_checks.py).
"""

from __future__ import annotations

import glob
import os
import stat
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu2tpu.record import perf_samples
from gpu2tpu.record.chip_view import AccelChip, ChipView, HostChip

SCHEMA_VERSION = 1
KERNEL_SPACE = 1 << 63  # instruction pointers at or above this are the kernel's
# the code a CPU sample can land in, by kind (see _code_kind)
KINDS = ("xla_runtime", "jit", "host_kernels", "python", "kernel", "modified", "other", "unknown")
DEVICE_GLOBS = ("/dev/accel*", "/dev/vfio/*")  # the accelerator nodes, matched by device number
MAPS_EVERY = 4  # re-read a process's maps at least every this many samples (and on unknown ips)
# The observer's own bounds (issue 39): a process's maps are read again no sooner than this many
# times the last read took (a process with 60,000 mappings cannot make the observer spend more
# than 1/MAPS_DUTY of its time on it), at most MAX_EXEC_MAPS executable mappings are kept per
# process (a torch_xla process has about 110; the count seen is recorded), and a process that has
# ended keeps its summary only, not its mappings.
MAPS_DUTY = 20
UNNAMED = ("jit", "modified", "other")  # code no trusted file's identity names
MAX_EXEC_MAPS = 4096


@dataclass
class _Thread:
    tid: int
    pid: int
    comm: str
    first_s: float
    last_s: float
    cpu_ticks: int = 0
    run_ns: int = 0  # /proc/<pid>/task/<tid>/schedstat: CPU time and times scheduled in
    slices: int = 0


@dataclass
class _Process:
    pid: int
    ppid: int
    exe: str
    comm: str
    first_s: float
    last_s: float
    cpu_ticks: int = 0  # own user + system, every thread that ever ran (dead ones too)
    child_ticks: int = 0  # reaped children's user + system
    libraries: set[str] = field(default_factory=set)  # runtime libraries mapped (XLA, TPU)
    modified: set[str] = field(default_factory=set)  # trusted code files it wrote into
    anon_exec: int = 0  # most anonymous executable mappings seen at once
    anon_exec_kb: int = 0
    devices: set[str] = field(default_factory=set)
    maps: list[tuple[int, int, str, str]] = field(default_factory=list)  # start, end, kind, label
    starts: list[int] = field(default_factory=list)
    maps_age: int = MAPS_EVERY
    maps_next_s: float = 0.0  # no periodic re-read before this (monotonic): MAPS_DUTY x its cost
    exec_maps: int = 0  # most executable mappings seen at once (before MAX_EXEC_MAPS)


class KernelView:
    """The Observer (sandbox/__init__.py) that records the kernel's view of one run.

    `period_ms`: CPU-clock sampling period per thread (0: /proc only); `chip`: the accelerator's
    view (default: HostChip); `code`: which files count as the XLA / TPU runtime (default: found
    in this interpreter's install)."""

    def __init__(self, period_ms: float = 2.0, chip: ChipView | None = None,
                 code: perf_samples.CodeMap | None = None,
                 devices: dict[int, str] | None = None) -> None:
        self.period_s = period_ms / 1e3
        self.devices = devices if devices is not None else device_nodes()
        self.chip = chip or HostChip()
        self.code = code or perf_samples.CodeMap()
        self.sampler = perf_samples.ThreadSampler(int(period_ms * 1e6)) \
            if period_ms > 0 and perf_samples.available() else None
        self.sampler_error = None if self.sampler or period_ms <= 0 else \
            "perf_event_open is not permitted here (needs root or perf_event_paranoid < 2)"
        self.root = 0
        self.t0 = time.monotonic()
        self.end_s: float | None = None
        self.procs: dict[int, _Process] = {}
        self.threads: dict[int, _Thread] = {}
        self.kinds: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()
        self.thread_kinds: dict[int, Counter[str]] = {}
        self.samples = 0
        self.cost_s: list[float] = []
        self.errors: list[str] = []  # what went wrong observing (the run itself is unaffected)
        self.ticks = os.sysconf("SC_CLK_TCK")

    # --- Observer ---------------------------------------------------------------------------
    def started(self, pid: int) -> None:
        self.root, self.t0 = pid, time.monotonic()

    def sample(self, pids: list[int]) -> None:
        t = time.perf_counter()
        try:
            self._observe(pids)
        except Exception as exc:  # never the run's end: the error is recorded in kernel.json
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        self.cost_s.append(time.perf_counter() - t)

    def _observe(self, pids: list[int]) -> None:
        now = time.monotonic() - self.t0
        self.samples += 1
        live: set[int] = set()
        for pid in pids:
            proc = self._process(pid, now)
            if proc is None:
                continue
            for tid in _list(f"/proc/{pid}/task"):
                self._thread(pid, int(tid), now)
                live.add(int(tid))
            proc.maps_age += 1
            if proc.maps_age >= MAPS_EVERY and time.monotonic() >= proc.maps_next_s:
                self._read_maps(proc)
            if self.samples % MAPS_EVERY == 1:
                proc.devices |= _device_fds(pid, self.devices)
        self.chip.sample(pids, self)
        self._drain()
        if self.sampler:
            for tid in [t for t in self.sampler.streams if t not in live]:
                self.sampler.forget(tid)
        shown = set(pids)
        for proc in self.procs.values():  # ended: its samples are drained, keep the summary only
            if proc.maps and proc.pid not in shown:
                proc.maps, proc.starts = [], []

    def finished(self) -> None:
        try:
            self._drain()
        except Exception as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        for proc in self.procs.values():  # the run is over: summaries only
            proc.maps, proc.starts = [], []
        if self.sampler:
            self.sampler.close()
        self.end_s = time.monotonic() - self.t0

    # --- /proc ------------------------------------------------------------------------------
    def _process(self, pid: int, now: float) -> _Process | None:
        stat = _stat(f"/proc/{pid}/stat")
        if stat is None:
            return None
        comm, fields = stat
        proc = self.procs.get(pid)
        if proc is None:
            try:
                exe = os.readlink(f"/proc/{pid}/exe")
            except OSError:
                exe = ""
            proc = self.procs[pid] = _Process(pid, int(fields[1]), exe, comm, now, now)
            self._read_maps(proc)
        proc.last_s, proc.comm = now, comm
        proc.cpu_ticks = max(proc.cpu_ticks, int(fields[11]) + int(fields[12]))
        proc.child_ticks = max(proc.child_ticks, int(fields[13]) + int(fields[14]))
        return proc

    def _thread(self, pid: int, tid: int, now: float) -> None:
        stat = _stat(f"/proc/{pid}/task/{tid}/stat")
        if stat is None:
            return
        comm, fields = stat
        th = self.threads.get(tid)
        if th is None:
            th = self.threads[tid] = _Thread(tid, pid, comm, now, now)
            if self.sampler:
                self.sampler.watch(tid)
        th.last_s, th.comm = now, comm
        th.cpu_ticks = max(th.cpu_ticks, int(fields[11]) + int(fields[12]))
        try:
            run_ns, _, slices = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[:3]
            th.run_ns, th.slices = max(th.run_ns, int(run_ns)), max(th.slices, int(slices))
        except (OSError, ValueError):
            pass

    def _read_maps(self, proc: _Process) -> None:
        proc.maps_age = 0
        t = time.monotonic()
        maps = self.code.read(proc.pid)
        proc.maps_next_s = time.monotonic() + MAPS_DUTY * (time.monotonic() - t)
        if maps is None:
            return
        jit = [m for m in maps if m[2] == "jit"]
        proc.libraries |= {m[3] for m in maps if m[2] == "xla_runtime"}
        proc.modified |= {m[3] for m in maps if m[2] == "modified"}
        proc.exec_maps = max(proc.exec_maps, len(maps))
        if len(maps) > MAX_EXEC_MAPS:  # the known code first, then the lowest addresses
            known = [m for m in maps if m[2] not in UNNAMED]
            maps = sorted(known[:MAX_EXEC_MAPS] + [m for m in maps if m[2] in UNNAMED]
                          [:max(0, MAX_EXEC_MAPS - len(known))])
        proc.maps, proc.starts = maps, [m[0] for m in maps]
        proc.anon_exec = max(proc.anon_exec, len(jit))
        proc.anon_exec_kb = max(proc.anon_exec_kb, sum(m[1] - m[0] for m in jit) // 1024)

    # --- CPU samples ------------------------------------------------------------------------
    def _drain(self) -> None:
        if not self.sampler:
            return
        reread: set[int] = set()  # processes whose maps were read again during this drain
        for tid, ip in self.sampler.drain():
            th = self.threads.get(tid)
            kind, label = ("kernel", "[kernel]") if ip >= KERNEL_SPACE else \
                self._where(th.pid if th else tid, ip, reread)
            self.kinds[kind] += 1
            self.labels[label] += 1
            self.thread_kinds.setdefault(tid, Counter())[kind] += 1

    def _where(self, pid: int, ip: int, reread: set[int]) -> tuple[str, str]:
        proc = self.procs.get(pid)
        if proc is None:
            return "unknown", "?"
        found = perf_samples.where(proc.maps, proc.starts, ip)
        # code mapped since the last read (a JIT, a library loaded): read again, once per drain and
        # within the maps budget; code unmapped since stays unknown
        if found is None and pid not in reread and time.monotonic() >= proc.maps_next_s:
            reread.add(pid)
            self._read_maps(proc)
            found = perf_samples.where(proc.maps, proc.starts, ip)
        return found or ("unknown", "?")

    # --- results ----------------------------------------------------------------------------
    def sample_kinds(self) -> dict[str, int]:
        return dict(self.kinds)

    def device_files(self) -> list[str]:
        return sorted({d for p in self.procs.values() for d in p.devices})

    def result(self) -> dict[str, Any]:
        """kernel.json's content (docs/formats.md)."""
        tick = 1.0 / self.ticks
        # every process's own and reaped children's time, less the processes that ended before
        # the last observation under an observed parent (their time is in its children's time)
        last = max((p.last_s for p in self.procs.values()), default=0.0)
        reaped = [p for p in self.procs.values() if p.last_s < last and p.ppid in self.procs]
        total = sum(p.cpu_ticks + p.child_ticks for p in self.procs.values()) - \
            sum(p.cpu_ticks + p.child_ticks for p in reaped)
        sampled = sum(self.kinds.values())
        costs = sorted(self.cost_s)
        return {
            "schema_version": SCHEMA_VERSION, "root_pid": self.root,
            "wall_s": round(self.end_s if self.end_s is not None else time.monotonic() - self.t0, 3),
            "observations": self.samples, "cpu_s": round(total * tick, 3), "errors": self.errors[:5],
            "processes": [{"pid": p.pid, "ppid": p.ppid, "exe": p.exe, "comm": p.comm,
                           "first_s": round(p.first_s, 2), "last_s": round(p.last_s, 2),
                           "cpu_s": round(p.cpu_ticks * tick, 3),
                           "runtime_libraries": sorted(p.libraries), "anon_exec_mappings": p.anon_exec,
                           "exec_mappings": p.exec_maps, "modified_code": sorted(p.modified),
                           "anon_exec_kb": p.anon_exec_kb, "device_files": sorted(p.devices)}
                          for p in self.procs.values()],
            "threads": [{"tid": t.tid, "pid": t.pid, "comm": t.comm, "main": t.tid == t.pid,
                         "first_s": round(t.first_s, 2), "last_s": round(t.last_s, 2),
                         "cpu_s": round(t.run_ns / 1e9 if t.run_ns else t.cpu_ticks * tick, 3),
                         "timeslices": t.slices, "samples": dict(self.thread_kinds.get(t.tid, {}))}
                        for t in self.threads.values()],
            "cpu_samples": {
                "method": "perf_event cpu-clock" if self.sampler else None,
                "error": self.sampler_error, "period_s": self.period_s if self.sampler else None,
                "total": sampled, "lost": self.sampler.lost if self.sampler else 0,
                "by_kind": {k: self.kinds.get(k, 0) for k in KINDS},
                "by_code": dict(self.labels.most_common(12)),
                "unopened_threads": len(self.sampler.failed) if self.sampler else 0,
                "sampled_s": round(sampled * self.period_s, 3)},
            "chip": self.chip.summary(self),
            "overhead": {"per_observation_ms": round(1e3 * sum(costs) / len(costs), 3) if costs else 0.0,
                         "max_ms": round(1e3 * costs[-1], 3) if costs else 0.0,
                         "total_s": round(sum(costs), 3)},
        }


def _stat(path: str) -> tuple[str, list[str]] | None:
    """(comm, fields after it) of a /proc stat file; fields[0] is the state."""
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    head, _, rest = text.rpartition(")")
    return head.partition("(")[2], rest.split()


def _list(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def device_nodes(globs: tuple[str, ...] = DEVICE_GLOBS) -> dict[int, str]:
    """Device number -> path of this host's accelerator nodes (none off a TPU host)."""
    out = {}
    for path in (p for g in globs for p in glob.glob(g)):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode):
            out[st.st_rdev] = path
    return out


def _device_fds(pid: int, devices: dict[int, str]) -> set[str]:
    """The accelerator nodes a process holds open, by the device number of each descriptor's file
    (the path it shows can be the sandbox's own)."""
    found: set[str] = set()
    if not devices:
        return found
    for fd in _list(f"/proc/{pid}/fd"):
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev in devices:
            found.add(devices[st.st_rdev])
    return found


def observer_for(target: Any) -> KernelView:
    """The kernel view for a run on `target` (None: the reference device, this host): on the
    emulated target and the host the chip stand-in is XLA's CPU time; on a TPU, the device files."""
    emulated = target is None or getattr(target, "emulated", False)
    return KernelView(chip=HostChip() if emulated else AccelChip())
