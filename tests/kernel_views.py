"""Synthetic kernel views (record/kernel_view.py's summary) for the kernel checks' tests, in one
home: tests/harness/test_kernel_view.py and tests/security/test_thread_class.py."""

from __future__ import annotations


def view(threads: list[dict], cpu_s: float | None = None, libs: tuple[str, ...] = ("_XLAC.so",),
         period: float = 0.002) -> dict:
    """A view of one process whose threads took these samples by class."""
    total = sum(sum(t.values()) for t in threads)
    return {"cpu_s": cpu_s if cpu_s is not None else total * period,
            "processes": [{"pid": 1, "runtime_libraries": list(libs)}],
            "threads": [{"tid": i, "samples": t} for i, t in enumerate(threads)],
            "cpu_samples": {"method": "perf_event cpu-clock", "period_s": period, "total": total},
            "chip": {"device_files": []}}


GOLD = view([{"python": 2000, "host_kernels": 150, "xla_runtime": 200},  # traces
             {"xla_runtime": 1800, "jit": 10}, {"xla_runtime": 1800},  # XLA's Eigen pool
             {"jit": 400, "xla_runtime": 100}])  # XLA's program threads
HOST = view([{"python": 1500, "host_kernels": 300, "jit": 200},  # eager, oneDNN's JIT
             {"host_kernels": 150, "jit": 250}], libs=())  # an OpenMP worker

# a scan.json with no findings: a synthetic run observed as a real one is
CLEAN_SCAN = {"schema_version": 1, "source": "static-scan", "files": 1, "added_lines": 1, "findings": []}
