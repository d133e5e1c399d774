"""The kernel view (record/kernel_view.py) on small real processes, and the supervisor's evidence
lines (judge/kernel_checks.py) on synthetic views."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kernel_views import GOLD, HOST, view

from gpu2tpu.judge.criteria import CriterionResult
from gpu2tpu.judge.kernel_checks import check_kernel, profile
from gpu2tpu.record import perf_samples
from gpu2tpu.record.chip_view import AccelChip, HostChip, chip_interrupts
from gpu2tpu.record.kernel_view import KernelView
from gpu2tpu.record.targets import get_target
from gpu2tpu.sandbox import descendants
from gpu2tpu.sandbox.process import clean_env, run_process

sampling = pytest.mark.skipif(not perf_samples.available(), reason="perf_event_open not permitted here")

BURNERS = """
import threading, time
def burn(seconds):
    x = 0
    while time.thread_time() < seconds:
        for i in range(20000):
            x += i
threads = [threading.Thread(target=burn, args=(1.0,)) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
time.sleep(0.3)
"""

# numpy's BLAS does the work; the test names that library's file the "runtime"
BLAS = """
import ctypes, mmap, time, numpy as np
exe = [mmap.mmap(-1, 4096, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
       for flags in (mmap.MAP_PRIVATE, mmap.MAP_SHARED)]  # as a JIT maps its code
a = np.random.rand(300, 300)
t = time.time()
while time.time() - t < 2.0:
    a = np.tanh(a @ a)
time.sleep(0.3)
"""


def _watch(code: str, view: KernelView, every: float = 0.1) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "OMP_NUM_THREADS": "1",
                                                               "OPENBLAS_NUM_THREADS": "1"})
    view.started(proc.pid)
    while proc.poll() is None:
        view.sample([proc.pid, *descendants(proc.pid)])
        time.sleep(every)
    view.finished()
    return proc


def test_threads_and_their_cpu_time() -> None:
    view = KernelView()
    assert _watch(BURNERS, view).returncode == 0
    k = view.result()
    threads = {t["tid"]: t for t in k["threads"]}
    main = [t for t in threads.values() if t["main"]]
    burners = [t for t in threads.values() if not t["main"] and t["cpu_s"] > 0.5]
    assert len(main) == 1 and len(burners) == 2, k["threads"]
    assert all(0.8 <= t["cpu_s"] <= 1.5 for t in burners)
    assert all(t["first_s"] <= t["last_s"] for t in threads.values())
    assert k["cpu_s"] >= sum(t["cpu_s"] for t in burners)
    proc = k["processes"][0]
    assert proc["exe"] == os.path.realpath(sys.executable) and proc["anon_exec_mappings"] >= 0
    assert k["overhead"]["per_observation_ms"] < 50
    if perf_samples.available():
        for t in burners:  # a burner thread's samples are the interpreter's
            n = sum(t["samples"].values())
            assert n * k["cpu_samples"]["period_s"] >= 0.5 * t["cpu_s"], t
            assert t["samples"].get("python", 0) >= 0.8 * n, t


@sampling
def test_samples_land_in_the_library_that_ran_by_file_identity(tmp_path: Path) -> None:
    import numpy as np

    libs = sorted(Path(np.__file__).parent.parent.joinpath("numpy.libs").glob("*openblas*"))
    if not libs:
        pytest.skip("numpy has no bundled OpenBLAS here")
    st = libs[0].stat()
    code = perf_samples.CodeMap(runtime={(st.st_dev, st.st_ino): libs[0].name}, host={})
    view = KernelView(code=code)
    assert _watch(BLAS, view).returncode == 0
    k = view.result()
    kinds = k["cpu_samples"]["by_kind"]
    assert kinds["xla_runtime"] > 0.3 * k["cpu_samples"]["total"], k["cpu_samples"]
    assert k["processes"][0]["runtime_libraries"] == [libs[0].name]
    assert k["processes"][0]["anon_exec_mappings"] >= 2  # the RWX mappings
    # a copy of that library (same name, another file) is not it
    copy = tmp_path / libs[0].name
    shutil.copyfile(libs[0], copy)
    cst = copy.stat()
    assert code.kind(f"{os.major(cst.st_dev):x}:{os.minor(cst.st_dev):x}", cst.st_ino, str(copy)) == \
        ("other", copy.name)
    assert code.kind(f"{os.major(st.st_dev):x}:{os.minor(st.st_dev):x}", st.st_ino, str(libs[0])) == \
        ("xla_runtime", libs[0].name)


@sampling
def test_threads_it_cannot_watch_count_as_unsampled_cpu_time() -> None:
    """Past its cap on watched threads (or for threads too short-lived to watch), the CPU time
    the kernel accounts for the process and no sample saw is judged, not ignored."""
    view = KernelView()
    assert view.sampler is not None
    view.sampler.max_threads = 1  # the main thread only: the burners go unwatched
    assert _watch(BURNERS, view).returncode == 0
    k = view.result()
    assert k["cpu_samples"]["unopened_threads"] == 2
    assert profile(k).unsampled_s >= 1.5
    res = CriterionResult("hardware")
    check_kernel(res, get_target("xla-cpu"), 3.0, k, GOLD, None, claims=True)
    assert "kernel_unsampled" in [e.get("signal") for e in res.evidence if not e["ok"]]


def test_without_samples_the_view_says_so() -> None:
    view = KernelView(period_ms=0)
    assert _watch("import time; time.sleep(0.5)", view).returncode == 0
    k = view.result()
    assert k["cpu_samples"]["method"] is None and k["cpu_samples"]["total"] == 0
    res = CriterionResult("hardware")
    check_kernel(res, get_target("xla-cpu"), 3.0, k, k, None, claims=True)
    line = res.evidence[-1]
    assert not res.passed and line["category"] == "unverified", line
    assert "not observed" in line["text"] and "perf_event_paranoid" in line["text"]


def test_observer_through_the_sandbox(tmp_path: Path) -> None:
    """The sandbox shows the observer the whole tree, bwrap first (or the command unsandboxed)."""
    from gpu2tpu.sandbox import process as sandboxed

    view = KernelView()
    try:
        sandboxed.sandbox_mode()
    except Exception:
        sandboxed.configure(unsafe=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "work").mkdir()
    res = run_process([sys.executable, "-c", BURNERS], tmp_path / "work", tmp_path / "out",
                      clean_env(), 60, observer=view)
    assert res.exit_code == 0
    k = view.result()
    assert k["root_pid"] == k["processes"][0]["pid"]
    pythons = [p for p in k["processes"] if p["comm"].startswith("python")]
    assert pythons and pythons[0]["cpu_s"] >= 1.5
    assert sum(t["cpu_s"] > 0.5 for t in k["threads"]) == 2


def test_device_files_held_open_by_device_number() -> None:
    """/dev/zero stands in for an accelerator node: found by its device number, not its name."""
    view = KernelView(period_ms=0, devices={os.stat("/dev/zero").st_rdev: "/dev/accel0"})
    code = "import time\nf = open('/dev/zero', 'rb')\ntime.sleep(1.0)"
    assert _watch(code, view).returncode == 0
    k = view.result()
    assert k["processes"][0]["device_files"] == ["/dev/accel0"]
    assert HostChip().summary(view)["device_files"] == ["/dev/accel0"]


def test_an_observer_failure_never_ends_the_run() -> None:
    class Broken(HostChip):
        def sample(self, pids: list[int], view: KernelView) -> None:
            raise RuntimeError("driver gone")

    view = KernelView(period_ms=0, chip=Broken())
    assert _watch("import time; time.sleep(0.5)", view).returncode == 0
    assert view.result()["errors"][0] == "RuntimeError: driver gone"


def test_chip_views() -> None:
    """The CPU stand-in and the TPU view (fake sysfs and /proc/interrupts)."""
    host = HostChip().summary(KernelView(period_ms=0))
    assert host == {"kind": "xla-cpu", "device_files": []}
    text = ("           CPU0       CPU1\n"
            " 40:        10         5  PCI-MSIX-0000:00:04.0   0-edge  vfio-msix[0](0000:00:04.0)\n"
            " 41:         1         2  PCI-MSIX-0000:00:05.0   0-edge  vfio-msix[0](0000:00:05.0)\n"
            " 42:         7         0  PCI-MSIX-0000:00:06.0   0-edge  nvme0q1\n")
    assert chip_interrupts(text, ["0000:00:04.0", "0000:00:05.0"]) == \
        {"0000:00:04.0": 15, "0000:00:05.0": 3}


def test_accel_chip_reads_google_pci_devices(tmp_path: Path) -> None:
    for name, vendor in (("0000:00:04.0", "0x1ae0"), ("0000:00:06.0", "0x8086")):
        (tmp_path / "pci" / name).mkdir(parents=True)
        (tmp_path / "pci" / name / "vendor").write_text(vendor + "\n")
    irq = tmp_path / "interrupts"
    irq.write_text("  CPU0\n 40:  10  vfio-msix[0](0000:00:04.0)\n")
    chip = AccelChip(str(tmp_path / "pci"), str(irq))
    view = KernelView(period_ms=0, chip=chip)
    chip.sample([], view)
    irq.write_text("  CPU0\n 40:  25  vfio-msix[0](0000:00:04.0)\n")
    chip.sample([], view)
    summary = chip.summary(view)
    assert summary["pci_chips"] == ["0000:00:04.0"] and summary["interrupts"] == {"0000:00:04.0": 15}


# --- the evidence lines, on synthetic kernel views ----------------------------------------------

def _lines(cand: dict | None, gold: dict | None = GOLD, ref: dict | None = HOST,
           claims: bool = True) -> CriterionResult:
    res = CriterionResult("hardware")
    check_kernel(res, get_target("xla-cpu"), 3.0, cand, gold, ref, claims)
    return res


def test_gold_profile_and_host_profile() -> None:
    g, h = profile(GOLD), profile(HOST)
    assert g.xla_exec_s == pytest.approx((1810 + 1800 + 500) * 0.002)
    assert g.host_exec_s == 0 and h.host_exec_s == pytest.approx(600 * 0.002)
    assert _lines(GOLD).passed
    res = _lines(HOST)
    failed = {e["text"].split(" (")[0].split(":")[0]: e["category"] for e in res.evidence if not e["ok"]}
    assert set(failed.values()) == {"tampered"} and len(failed) == 4, res.evidence
    assert all(e["source"] == "supervisor" for e in res.evidence)
    honest = _lines(HOST, claims=False)
    assert {e["category"] for e in honest.evidence if not e["ok"]} == {"wrong_device"}


def test_xla_busy_work_beside_host_training_is_work_left_on_the_host() -> None:
    """Dummy XLA work passes the execution line; the eager compute beside it does not."""
    both = view([{"python": 1500, "host_kernels": 300, "jit": 200, "xla_runtime": 50},
                 {"host_kernels": 150, "jit": 250}, {"xla_runtime": 1500, "jit": 300}])
    res = _lines(both)
    bad = [e for e in res.evidence if not e["ok"]]
    assert [e["signal"] for e in bad] == ["kernel_host_exec", "kernel_host_compute"], res.evidence
    assert {e["category"] for e in bad} == {"cpu_fallback"}


def test_work_in_threads_too_short_to_watch_is_not_unseen() -> None:
    hidden = dict(GOLD, cpu_s=profile(GOLD).sampled_s + 5.0)
    res = _lines(hidden)
    assert [e["signal"] for e in res.evidence if not e["ok"]] == ["kernel_unsampled"]


def test_missing_kernel_views_fail_closed() -> None:
    """Evidence the grader did not collect is never a pass: `unverified`, saying what is missing."""
    absent = _lines(None, gold=None)
    assert [e["category"] for e in absent.evidence] == ["unverified"]
    assert "no kernel view of this run or of its gold" in absent.evidence[0]["text"]
    dropped = _lines(None)
    assert not dropped.passed and dropped.evidence[0]["category"] == "infra"
    no_gold = _lines(HOST, gold=None)
    assert no_gold.evidence[-1]["category"] == "unverified"
    assert "gold has no kernel view" in no_gold.evidence[-1]["text"]


def test_tpu_device_files_where_the_gold_held_them() -> None:
    gold = dict(GOLD, chip={"device_files": ["/dev/vfio/0"]})
    res = _lines(GOLD, gold=gold)
    line = next(e for e in res.evidence if "device files" in e["text"])
    assert not line["ok"] and line["category"] == "tampered"


def test_a_thread_tracing_for_the_interpreter_is_not_an_eager_worker() -> None:
    """PyTorch's autograd thread runs an XLA graph's backward: dispatch in libtorch with a share in
    XLA's runtime and few interpreter samples (TD3_BC's gold: 291 samples, 13 in Python, 50 in
    XLA's runtime, 155 in libtorch). Classed an eager OpenMP worker, its dispatch counted as host
    eager execution and failed a correct migration against a gold whose threads fell otherwise."""
    autograd = {"python": 13, "xla_runtime": 50, "host_kernels": 155, "jit": 73}
    p = profile(view([{"python": 2000, "host_kernels": 150, "xla_runtime": 200}, autograd,
                      {"xla_runtime": 1800, "jit": 10}]))
    assert p.host_exec_s == pytest.approx(73 * 0.002)  # its JIT code only, as the interpreter's
    assert p.xla_trace_s == pytest.approx((200 + 50) * 0.002)
    assert p.host_compute_s == pytest.approx((150 + 155 + 73) * 0.002)



def test_a_gold_whose_samples_missed_the_maps_sets_its_limit_at_the_upper_end() -> None:
    """Samples in code the observer's maps did not show yet (`unknown`: new JIT kernels, new XLA
    programs) grow with the machine's load. A gold built on a loaded machine lost its oneDNN JIT
    samples there (cifar_amp: 0.24 s of host compute seen, 0.15 s unclassified), and correct runs
    on a quiet machine came within 0.81 of a limit set from what was seen. The limit takes the
    gold's figure at its upper end; the run's own unknown samples never count as host compute."""
    main = {"python": 2000, "host_kernels": 150, "xla_runtime": 200}
    lost = view([dict(main, unknown=300), {"xla_runtime": 1800, "jit": 10}, {"xla_runtime": 1800},
                 {"jit": 400, "xla_runtime": 100, "unknown": 900}])  # an XLA thread's count nowhere
    p = profile(lost)
    assert p.host_compute_s == pytest.approx(150 * 0.002)
    assert p.unknown_host_s == pytest.approx(300 * 0.002)
    # 4x the gold's seen host compute: over 3x of what was seen, within 3x of the upper end
    cand = view([dict(main, host_kernels=600, unknown=2000), {"xla_runtime": 1800, "jit": 10},
                 {"xla_runtime": 1800}, {"jit": 400, "xla_runtime": 100}])
    assert profile(cand).host_compute_s == pytest.approx(600 * 0.002)  # its unknown: not counted
    res = _lines(cand, gold=lost)
    line = next(e for e in res.evidence if e.get("signal") == "kernel_host_compute")
    assert line["ok"] and line["limit"] == pytest.approx(3 * 450 * 0.002), line
    assert "(+0.60 s in code mapped since the last maps read)" in line["text"]
    seen_only = dict(lost, threads=[dict(t, samples={k: v for k, v in t["samples"].items()
                                                      if k != "unknown"}) for t in lost["threads"]])
    line = next(e for e in _lines(cand, gold=seen_only).evidence
                if e.get("signal") == "kernel_host_compute")
    assert not line["ok"] and line["category"] == "cpu_fallback"
