"""Resource budgets of one sandboxed run: memory, tasks (processes and threads), disk.

Where the machine lets this process create cgroups (cgroup v2 with the memory and pids
controllers delegated to our cgroup, or v1 hierarchies we may write, as root usually may), each
run gets its own cgroup: `memory.max` / `memory.limit_in_bytes` and `pids.max` hold for every
process and thread of the run, and the kernel records the run's peak memory. Elsewhere the run
falls back to rlimits: RLIMIT_DATA (private writable memory, per process) and RLIMIT_NPROC, which
the kernel does not enforce for a process whose user is root outside its namespace; `Budget.held`
says which held. Disk: each private tmpfs is sized (bwrap --size), every file is capped
(RLIMIT_FSIZE), and the supervisor measures the writable directories while the run goes on.
"""

from __future__ import annotations

import os
import resource
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MiB = 1024 * 1024
GiB = 1024 * MiB
CGROUP_ROOT = Path("/sys/fs/cgroup")


def default_tasks() -> int:
    """Processes plus threads: thread pools (torch's, XLA's, OpenMP's) grow with the cores."""
    return 64 + 8 * (os.cpu_count() or 1)


@dataclass
class Budget:
    memory_bytes: int | None = 8 * GiB
    tasks: int = field(default_factory=default_tasks)
    file_bytes: int = 4 * GiB  # RLIMIT_FSIZE: the largest file it may write
    held: dict[str, str] = field(default_factory=dict)  # memory/tasks -> "cgroup" | "rlimit"


class RunCgroup:
    """One cgroup per run (v2, or the v1 memory and pids hierarchies): made before the run,
    joined by the child before it execs, read and removed after."""

    def __init__(self, dirs: dict[str, Path]):
        self.dirs = dirs  # controller ("memory", "pids") -> the run's directory in it

    @classmethod
    def create(cls, budget: Budget) -> RunCgroup | None:
        name = f"gpu2tpu-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        dirs = _v2_dirs(name) or _v1_dirs(name)
        if not dirs:
            return None
        group = cls(dirs)
        try:
            group._write("memory", ("memory.max", "memory.limit_in_bytes"), budget.memory_bytes)
            group._write("memory", ("memory.swap.max", "memory.memsw.limit_in_bytes"),
                         budget.memory_bytes, optional=True)
            group._write("pids", ("pids.max",), budget.tasks)
        except OSError:
            group.remove()
            return None
        return group

    def _write(self, ctl: str, names: Sequence[str], value: int | None, optional: bool = False) -> None:
        if value is None:
            return
        for n in names:
            f = self.dirs[ctl] / n
            if f.exists():
                try:
                    f.write_text(str(value))
                    return
                except OSError:
                    if not optional:
                        raise
        if not optional:
            raise OSError(f"no writable {names} in {self.dirs[ctl]}")

    def join(self) -> None:
        """In the child, before exec: move this process into every directory of the run."""
        for d in {*self.dirs.values()}:
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def peak_memory(self) -> int | None:
        for n in ("memory.peak", "memory.max_usage_in_bytes"):
            try:
                return int((self.dirs["memory"] / n).read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
        return None

    def memory_exceeded(self) -> bool:
        """Whether the kernel stopped the run for memory (an OOM kill or a failed charge)."""
        d = self.dirs["memory"]
        for name, keys in (("memory.events", ("oom_kill", "max")), ("memory.oom_control", ("oom_kill",))):
            try:
                events = dict(line.split()[:2] for line in (d / name).read_text().splitlines())
                return any(int(events.get(k, 0)) > 0 for k in keys)
            except (OSError, ValueError):
                continue
        return False

    def remove(self) -> None:
        for d in {*self.dirs.values()}:
            for _ in range(50):  # the last processes of the run may still be exiting
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def _own_path(controller: str) -> str | None:
    """This process's cgroup path in the v1 hierarchy of `controller` ("" for v2's)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctls, path = line.split(":", 2)
            if ctls.split(",") == [controller] or (controller == "" and ctls == ""):
                return path
    except OSError:
        pass
    return None


def _sweep(base: Path) -> None:
    """Remove the empty cgroups that runs of a harness process no longer alive left behind
    (killed before it could remove them); a cgroup still in use refuses rmdir."""
    for d in base.glob("gpu2tpu-*-*"):
        pid = d.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                d.rmdir()
            except OSError:
                pass


def _v2_dirs(name: str) -> dict[str, Path]:
    own = _own_path("")
    for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if own is None or not (mount / "cgroup.controllers").exists():
            continue
        base = mount / own.lstrip("/")
        try:
            if not {"memory", "pids"} <= set((base / "cgroup.subtree_control").read_text().split()):
                continue
            _sweep(base)
            d = base / name
            d.mkdir()
            return {"memory": d, "pids": d}
        except OSError:
            continue
    return {}


def _v1_dirs(name: str) -> dict[str, Path]:
    dirs: dict[str, Path] = {}
    for ctl in ("memory", "pids"):
        own = _own_path(ctl)
        base = CGROUP_ROOT / ctl / (own or "/").lstrip("/")
        try:
            if own is None or not (base / "cgroup.procs").exists():
                raise OSError(ctl)
            _sweep(base)
            (base / name).mkdir()
            dirs[ctl] = base / name
        except OSError:
            for d in dirs.values():
                d.rmdir()
            return {}
    return dirs


def prepare(budget: Budget) -> tuple[RunCgroup | None, Callable[[], None]]:
    """The run's cgroup (None where none can be made) and the child's pre-exec function: join it,
    then the rlimits (memory and tasks by rlimit only where no cgroup holds them)."""
    group = RunCgroup.create(budget)
    budget.held = {"memory": "cgroup" if group else "rlimit", "tasks": "cgroup" if group else "rlimit"}

    def apply() -> None:
        if group is not None:
            group.join()
        resource.setrlimit(resource.RLIMIT_FSIZE, (budget.file_bytes, budget.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if group is None:
            resource.setrlimit(resource.RLIMIT_NPROC, (budget.tasks, budget.tasks))
            if budget.memory_bytes:
                resource.setrlimit(resource.RLIMIT_DATA, (budget.memory_bytes, budget.memory_bytes))
    return group, apply


def disk_usage(roots: Sequence[Path]) -> int:
    """Bytes allocated under `roots` (links not followed, each inode once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    todo = [str(r) for r in roots]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
            if e.is_dir(follow_symlinks=False):
                todo.append(e.path)
    return total


def scrub_special_bits(roots: Sequence[Path]) -> list[str]:
    """Clear set-user-ID and set-group-ID bits the run left on files under `roots` (inside, its
    user may be root's own uid outside, so such a file would run as root on the host); returns
    the paths that had one."""
    found = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for n in dirnames + filenames:
                p = os.path.join(dirpath, n)
                try:
                    st = os.lstat(p)
                    if st.st_mode & 0o6000 and not os.path.islink(p):
                        os.chmod(p, st.st_mode & ~0o6000 & 0o7777)
                        found.append(p)
                except OSError:
                    continue
    return found
