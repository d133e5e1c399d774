"""CPU samples of another process's threads, and the code they land in.

The samples are taken by the kernel (perf_event_open, software cpu-clock event): every
`period_ns` of CPU time a thread runs, the kernel writes the instruction pointer it was at into a
ring buffer that only this supervisor holds; the sampled process cannot see, stop or rewrite
them. Needs root (or perf_event_paranoid < 2) and a kernel with perf events; `available()` says
whether it works here, and callers fall back to /proc alone. `CodeMap` tells which code an
instruction pointer was in, from the process's executable mappings.

Used by record/kernel_view.py."""

from __future__ import annotations

import bisect
import ctypes
import functools
import mmap
import os
import platform
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SYSCALL = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_CPU_CLOCK = 1, 0
_SAMPLE_IP, _SAMPLE_TID = 1, 2
_RECORD_SAMPLE, _RECORD_LOST = 9, 2
_PAGES = 8  # data pages per thread's ring buffer (32 KiB: ~1300 samples between two reads)
_PAGE = mmap.PAGESIZE
_CLOEXEC = 8  # PERF_FLAG_FD_CLOEXEC


class _Attr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("config1", ctypes.c_uint64), ("config2", ctypes.c_uint64),
                ("branch_sample_type", ctypes.c_uint64), ("sample_regs_user", ctypes.c_uint64),
                ("sample_stack_user", ctypes.c_uint32), ("clockid", ctypes.c_int32),
                ("sample_regs_intr", ctypes.c_uint64), ("aux_watermark", ctypes.c_uint32),
                ("sample_max_stack", ctypes.c_uint16), ("reserved", ctypes.c_uint16)]


_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class _Stream:
    fd: int
    buf: mmap.mmap


class ThreadSampler:
    """One sampling event per thread, opened the first time the thread is shown (`watch`); `drain`
    returns the (tid, ip) samples written since the last call. A thread that starts and ends
    between two `watch` calls is not sampled: its CPU time shows as unsampled in /proc. At most
    `max_threads` are watched at once (descriptors and locked pages of the supervisor); a run with
    more live threads leaves the rest unsampled, which the criteria see as unsampled CPU time."""

    def __init__(self, period_ns: int = 2_000_000, max_threads: int = 256) -> None:
        self.period_ns = period_ns
        self.max_threads = max_threads
        self.streams: dict[int, _Stream] = {}
        self.lost = 0
        self.failed: dict[int, str] = {}  # tid -> why its event could not be opened

    def watch(self, tid: int) -> bool:
        if tid in self.streams or tid in self.failed:
            return tid in self.streams
        if len(self.streams) >= self.max_threads:
            self.failed[tid] = f"more than {self.max_threads} threads watched at once"
            return False
        fd = _open(tid, self.period_ns)
        if fd < 0:
            self.failed[tid] = os.strerror(-fd)
            return False
        try:
            buf = mmap.mmap(fd, _PAGE * (_PAGES + 1), mmap.MAP_SHARED,
                            mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as exc:
            os.close(fd)
            self.failed[tid] = str(exc)
            return False
        self.streams[tid] = _Stream(fd, buf)
        return True

    def drain(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for stream in self.streams.values():
            self.lost += _read(stream.buf, out)
        return out

    def forget(self, tid: int) -> None:
        """Close a thread's event (it ended); its last samples should be drained first."""
        stream = self.streams.pop(tid, None)
        if stream is not None:
            stream.buf.close()
            os.close(stream.fd)

    def close(self) -> None:
        for tid in list(self.streams):
            self.forget(tid)


def _open(tid: int, period_ns: int) -> int:
    """A cpu-clock sampling event on thread `tid`, enabled at once; -errno on failure."""
    if _SYSCALL is None:
        return -38  # ENOSYS: no syscall number for this machine
    attr = _Attr(type=_PERF_TYPE_SOFTWARE, size=ctypes.sizeof(_Attr), config=_PERF_COUNT_SW_CPU_CLOCK,
                 sample_period=period_ns, sample_type=_SAMPLE_IP | _SAMPLE_TID, flags=0,
                 wakeup_events=0)
    fd = _libc.syscall(_SYSCALL, ctypes.byref(attr), tid, -1, -1, _CLOEXEC)
    return fd if fd >= 0 else -ctypes.get_errno()


def _read(buf: mmap.mmap, out: list[tuple[int, int]]) -> int:
    """Append every sample between the ring buffer's tail and head to `out`; returns samples lost."""
    head = struct.unpack_from("<Q", buf, 1024)[0]  # perf_event_mmap_page.data_head
    tail = struct.unpack_from("<Q", buf, 1032)[0]
    size, lost = _PAGES * _PAGE, 0
    data = buf[_PAGE:]
    while tail < head:
        off = tail % size
        header = _wrapped(data, off, 8, size)
        kind, size_rec = struct.unpack_from("<IxxH", header)
        if size_rec == 0:
            break
        if kind == _RECORD_SAMPLE and size_rec >= 24:
            ip, _pid, tid = struct.unpack_from("<QII", _wrapped(data, off + 8, 16, size))
            out.append((tid, ip))
        elif kind == _RECORD_LOST:
            lost += struct.unpack_from("<QQ", _wrapped(data, off + 8, 16, size))[1]
        tail += size_rec
    struct.pack_into("<Q", buf, 1032, head)  # data_tail: the kernel may reuse what was read
    return lost


def _wrapped(data: bytes, off: int, n: int, size: int) -> bytes:
    off %= size
    return data[off:off + n] if off + n <= size else data[off:] + data[:n - (size - off)]


_WORKS: list[bool] = []


def available() -> bool:
    """Whether a sampling event can be opened on a thread of this process here (checked once)."""
    if not _WORKS:
        fd = _open(os.getpid(), 10_000_000)
        if fd >= 0:
            os.close(fd)
        _WORKS.append(fd >= 0)
    return _WORKS[0]


_HEX = frozenset("0123456789abcdef")
TRUSTED_KINDS = ("xla_runtime", "host_kernels", "python")  # named by a trusted file's identity


class CodeMap:
    """Which code each executable mapping of a process holds, by file identity (device, inode)
    against the trusted install, never by name: a file of the run's own named like a runtime
    library is `other`, and a trusted file's mapping the process wrote into is `modified`. Kinds:
    xla_runtime, jit (anonymous executable memory), host_kernels, python, kernel, modified, other,
    unknown."""

    def __init__(self, runtime: dict[tuple[int, int], str] | None = None,
                 host: dict[tuple[int, int], str] | None = None) -> None:
        self.runtime = runtime if runtime is not None else trusted_files(_RUNTIME_GLOBS)
        self.host = host if host is not None else trusted_files(_HOST_GLOBS)

    def read(self, pid: int) -> list[tuple[int, int, str, str]] | None:
        """(start, end, kind, label) of every executable mapping, sorted; None when unreadable.

        Read from smaps: a trusted file's mapping that is writable or has private dirty pages no
        longer holds that file's code (the process wrote into its copy), so it is `modified`,
        labelled with the file's name, never the file's kind."""
        try:
            text = Path(f"/proc/{pid}/smaps").read_text()
        except OSError:
            return None
        maps: list[list[Any]] = []
        current: list[Any] | None = None
        for line in text.splitlines():
            if line[:1] in _HEX and "-" in line.split(" ", 1)[0]:
                current = None
                parts = line.split(None, 5)
                if len(parts) < 5 or "x" not in parts[1]:
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                kind, label = self.kind(parts[3], int(parts[4]), parts[5] if len(parts) > 5 else "")
                if kind in TRUSTED_KINDS and "w" in parts[1]:
                    kind, label = "modified", label
                current = [lo, hi, kind, label]
                maps.append(current)
            elif current is not None and line.startswith("Private_Dirty:"):
                if current[2] in TRUSTED_KINDS and line.split()[1] != "0":
                    current[2] = "modified"
        return sorted((m[0], m[1], m[2], m[3]) for m in maps)

    def kind(self, dev: str, inode: int, path: str) -> tuple[str, str]:
        if path.startswith(("[vdso]", "[vsyscall]")):
            return "kernel", path
        if inode == 0 or path.startswith(("/dev/zero", "/memfd:")):  # a JIT's, private or shared
            return "jit", "[anonymous]"
        major, minor = (int(x, 16) for x in dev.split(":"))
        key = (os.makedev(major, minor), inode)
        if key in self.runtime:
            return "xla_runtime", self.runtime[key]
        if key in self.host:
            name = self.host[key]
            return ("python" if "python" in name else "host_kernels"), name
        return "other", os.path.basename(path.split(" (deleted)")[0]) or "?"


def where(maps: list[tuple[int, int, str, str]], starts: list[int], ip: int) -> tuple[str, str] | None:
    """(kind, label) of the mapping holding `ip`, or None."""
    i = bisect.bisect_right(starts, ip) - 1
    return (maps[i][2], maps[i][3]) if i >= 0 and ip < maps[i][1] else None


# Code that counts as the XLA / TPU runtime, and as the host's PyTorch and interpreter, found in
# this interpreter's install (read-only inside the sandbox): torch_xla's extension and its
# libraries, libtpu, PJRT plugins; libtorch, OpenMP, oneDNN/MKL, OpenBLAS; libpython.
_RUNTIME_GLOBS = ("_XLAC*.so", "torch_xla/**/*.so", "torch_xla.libs/*.so*", "libtpu/**/*.so",
                  "libtpu*.so", "torch_tpu/**/*.so", "*pjrt*/**/*.so", "jax_plugins/**/*.so")
_HOST_GLOBS = ("torch/lib/*.so*", "torch/*.so", "numpy.libs/*.so*", "numpy/**/*.so",
               "torch.libs/*.so*")


def site_packages() -> list[Path]:
    return sorted({Path(p) for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)})


@functools.lru_cache(maxsize=4)
def trusted_files(globs: tuple[str, ...]) -> dict[tuple[int, int], str]:
    """(device, inode) -> name of every file matching `globs` in this interpreter's install."""
    out: dict[tuple[int, int], str] = {}
    for root in site_packages():
        for pattern in globs:
            for path in root.glob(pattern):
                try:
                    st = path.stat()
                except OSError:
                    continue
                out[(st.st_dev, st.st_ino)] = path.name
    if globs is _HOST_GLOBS:
        for exe in {sys.executable, os.path.realpath(sys.executable)}:
            st = os.stat(exe)
            out[(st.st_dev, st.st_ino)] = "python"
        libdir = Path(sys.base_prefix) / "lib"
        for path in libdir.glob("libpython*.so*"):
            st = path.stat()
            out[(st.st_dev, st.st_ino)] = path.name
    return out
