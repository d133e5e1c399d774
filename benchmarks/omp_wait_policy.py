"""Benchmark: OpenMP's wait policy and the CPU time the `slow` rule relies on, on a busy machine.

The performance criterion calls a run `slow` on process wall time only when its CPU time is over
budget too (a busy machine stretches wall time, not CPU time). That holds only if waiting threads
sleep: under OpenMP's default policy, the idle threads of an eager CPU workload spin while another
process holds the cores, and both wall and CPU time grow. The harness runs every untrusted process
with OMP_WAIT_POLICY=PASSIVE (sandbox/__init__.py). Measured side by side in one run: an eager
multi-threaded torch workload (small matmuls and a double backward, as dlg's closures) alone and
beside CPU burners (one per core), under each policy; prints wall and CPU time and their ratios
to the unloaded run of the same policy.

    python benchmarks/omp_wait_policy.py [--repeats 2] [--burners N] [--iterations 300] [--tiny]

`--tiny` (CI, tests/test_benchmarks.py): one run per cell of 30 iterations; every cell still runs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import time

WORK = """
import torch
torch.manual_seed(0)
w = [torch.randn(64, 64, requires_grad=True) for _ in range(4)]
x = torch.randn(32, 64)
for _ in range({iterations}):
    h = x
    for m in w:
        h = torch.tanh(h @ m)
    g = torch.autograd.grad(h.square().sum(), w, create_graph=True)
    sum(v.square().sum() for v in g).backward()
"""


def burn(stop_at: float) -> None:
    while time.time() < stop_at:
        pass


def run_once(policy: str | None, iterations: int) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", WORK.format(iterations=iterations)], env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(policy: str | None, burners: int, repeats: int, iterations: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        procs = [multiprocessing.Process(target=burn, args=(time.time() + 600,)) for _ in range(burners)]
        for p in procs:
            p.start()
        try:
            wall, cpu = run_once(policy, iterations)
        finally:
            for p in procs:
                p.terminate()
                p.join()
        walls.append(wall)
        cpus.append(cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, help="runs per cell (the fastest counts; default 2)")
    parser.add_argument("--iterations", type=int, help="steps of the workload per run (default 300)")
    parser.add_argument("--tiny", action="store_true",
                        help="one run of 30 iterations per cell (CI); explicit values still win")
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2,
                        help="CPU-bound processes beside the loaded runs (default: one per core)")
    args = parser.parse_args()
    for name, value in ({"repeats": 1, "iterations": 30} if args.tiny else
                        {"repeats": 2, "iterations": 300}).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    print(f"{os.cpu_count()} cores; {args.burners} burners beside the loaded runs; best of {args.repeats}; "
          f"{args.iterations} iterations per run")
    print(f"{'policy':<10}{'alone wall':>12}{'alone CPU':>11}{'loaded wall':>13}{'loaded CPU':>12}"
          f"{'wall x':>8}{'CPU x':>7}")
    for policy in (None, "PASSIVE"):
        aw, ac = measure(policy, 0, args.repeats, args.iterations)
        lw, lc = measure(policy, args.burners, args.repeats, args.iterations)
        print(f"{policy or 'default':<10}{aw:>11.2f}s{ac:>10.2f}s{lw:>12.2f}s{lc:>11.2f}s"
              f"{lw / aw:>8.2f}{lc / ac:>7.2f}")


if __name__ == "__main__":
    main()
