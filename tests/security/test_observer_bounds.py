"""Issue 39: the observer outside the sandbox (record/kernel_view.py, sandbox/observing.py) stays
within its bounds whatever the graded code does: a look that takes long never delays the time
limit, a process with tens of thousands of mappings cannot make the observer spend its time
reading them, and waves of short-lived processes with many mappings do not grow its memory."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gpu2tpu.record.kernel_view import MAX_EXEC_MAPS, KernelView
from gpu2tpu.sandbox import process as sandboxed
from gpu2tpu.sandbox.process import clean_env, run_process

# N executable pages, each its own mapping: read-write pages between them keep the kernel from
# merging them (what a process mapping copies of library code page by page leaves behind)
MAPPINGS = """
import ctypes, sys, time
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
n, page = int(sys.argv[1]), 4096
base = libc.mmap(None, 2 * n * page, 3, 0x22, -1, 0)
for i in range(n):
    libc.mprotect(base + 2 * i * page, page, 5)
print("mapped", flush=True)
time.sleep(float(sys.argv[2]))
"""

WAVES = """
import subprocess, sys
for wave in range(int(sys.argv[1])):
    subprocess.run([sys.executable, "mappings.py", sys.argv[2], "0.4"], check=True)
"""

TICKER = """
import time
while True:
    print(time.monotonic(), flush=True)
    time.sleep(0.05)
"""


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    try:
        sandboxed.sandbox_mode()
    except Exception:
        sandboxed.configure(unsafe=True)


def _run(tmp_path: Path, argv: list[str], view: object, timeout: float) -> sandboxed.RunResult:
    (tmp_path / "out").mkdir(exist_ok=True)
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "mappings.py").write_text(MAPPINGS)
    (tmp_path / "work" / "waves.py").write_text(WAVES)
    (tmp_path / "work" / "ticker.py").write_text(TICKER)
    return run_process([sys.executable, *argv], tmp_path / "work", tmp_path / "out", clean_env(),
                       timeout, observer=view)  # type: ignore[arg-type]


class SlowObserver:
    """An observer whose every look takes 3 s (as 60,000 mappings made one take, at worst 5.5 s)."""

    def __init__(self) -> None:
        self.looks = 0
        self.ended = False

    def started(self, pid: int) -> None:
        pass

    def sample(self, pids: list[int]) -> None:
        self.looks += 1
        time.sleep(3.0)

    def finished(self) -> None:
        self.ended = True


def test_a_slow_look_never_delays_the_time_limit(tmp_path: Path) -> None:
    slow = SlowObserver()
    res = _run(tmp_path, ["ticker.py"], slow, timeout=1.0)
    assert res.timed_out
    ticks = [float(x) for x in (tmp_path / "out" / "stdout.log").read_text().split()]
    # stopped at the limit (the SIGTERM ends it at once), not after the observer's look
    assert 0.7 <= ticks[-1] - ticks[0] <= 1.8, ticks[-1] - ticks[0]
    assert slow.looks >= 1 and slow.ended  # the look in progress ended before it was told


def test_tens_of_thousands_of_mappings_do_not_take_the_observers_time(tmp_path: Path) -> None:
    view = KernelView(period_ms=0)
    res = _run(tmp_path, ["mappings.py", "30000", "8"], view, timeout=60)
    assert res.exit_code == 0, (tmp_path / "out" / "stderr.log").read_text()
    k = view.result()
    big = max(k["processes"], key=lambda p: p["exec_mappings"])
    assert big["exec_mappings"] >= 30000  # the count is evidence, recorded
    over = k["overhead"]
    # beyond its single most costly look, the observer spent at most a tenth of the run's time
    assert over["total_s"] - over["max_ms"] / 1e3 <= 0.1 * k["wall_s"], over
    assert all(not p.maps for p in view.procs.values())  # the run ended: summaries only


def test_waves_of_children_with_many_mappings_do_not_grow_the_observer(tmp_path: Path) -> None:
    held: list[int] = []

    class Counting(KernelView):
        def sample(self, pids: list[int]) -> None:
            super().sample(pids)
            held.append(sum(len(p.maps) for p in self.procs.values()))

    view = Counting(period_ms=0)
    res = _run(tmp_path, ["waves.py", "12", "3000"], view, timeout=120)
    assert res.exit_code == 0, (tmp_path / "out" / "stderr.log").read_text()
    children = [p for p in view.result()["processes"] if p["exec_mappings"] >= 3000]
    assert len(children) >= 3  # the observer saw the waves (their maps read in time)
    # at most two children's mappings held at once (one ending, one starting), never the waves'
    assert max(held) <= 2 * (min(3000, MAX_EXEC_MAPS) + 500), max(held)
