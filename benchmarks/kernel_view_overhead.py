"""Benchmark: what the kernel view's perf sampling costs the process it watches.

A CPU-bound child counts loop iterations for a fixed CPU time, once plain and once watched by
`KernelView` (perf samples at `--period` ms, /proc read every 50 ms), alternated so that a busy
machine hits both alike. Prints the best count of each and their ratio (target: at least 0.9,
i.e. sampling takes under a tenth of the watched process's CPU).

    python benchmarks/kernel_view_overhead.py [--repeats 5] [--seconds 0.6] [--period 2.0] [--tiny]

`--tiny` (CI, tests/test_benchmarks.py): two pairs of 0.2 s runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from gpu2tpu.record import perf_samples
from gpu2tpu.record.kernel_view import KernelView

CHILD = ("import time\nt = time.process_time()\nx = 0\n"
         "while time.process_time() - t < {seconds}: x += 1\nprint(x)")


def loops(seconds: float, period_ms: float | None) -> int:
    """Iterations the child counted in `seconds` of CPU; watched when `period_ms` is given."""
    code = CHILD.format(seconds=seconds)
    if period_ms is None:
        return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout)
    view = KernelView(period_ms=period_ms)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    view.started(proc.pid)
    while proc.poll() is None:
        view.sample([proc.pid])
        time.sleep(0.05)
    view.finished()
    return int(proc.stdout.read()) if proc.stdout else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="plain/watched pairs (best of each)")
    parser.add_argument("--seconds", type=float, default=0.6, help="CPU seconds per child")
    parser.add_argument("--period", type=float, default=2.0, help="perf sampling period, ms")
    parser.add_argument("--tiny", action="store_true", help="two pairs of 0.2 s (CI)")
    args = parser.parse_args()
    repeats, seconds = (2, 0.2) if args.tiny else (args.repeats, args.seconds)
    print(f"perf sampling available: {perf_samples.available()}")
    plain = watched = 0
    for _ in range(repeats):
        plain = max(plain, loops(seconds, None))
        watched = max(watched, loops(seconds, args.period))
    print(f"loops in {seconds} CPU s: plain {plain}, watched {watched}, "
          f"ratio {watched / plain:.3f} (target >= 0.9)")


if __name__ == "__main__":
    main()
