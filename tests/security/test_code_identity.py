"""Issue 39: code is named by what a mapping holds, not only by the file behind it. A process can
map a trusted library file (XLA's runtime, libtorch) privately, write its own code into its copy
and run it there: its CPU samples would then be credited to the runtime. The observer reads
smaps, and a trusted file's executable mapping that is writable or has private dirty pages is
`modified`, recorded per process and graded `tampered`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpu2tpu.judge.kernel_checks import profile
from gpu2tpu.record.kernel_view import KernelView
from gpu2tpu.record.perf_samples import CodeMap

# three private executable mappings of one file: untouched; writable and written; written while
# writable, then made read-execute again (what a careful attacker leaves behind)
REWRITER = """
import ctypes, mmap, sys
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
lib = open(sys.argv[1], "rb+")
fd = lib.fileno()
clean = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)
rwx = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE,
                prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
rwx[0:2] = b"\\xeb\\xfe"
hidden = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE,
                   prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
hidden[0:2] = b"\\xeb\\xfe"
addr = ctypes.addressof(ctypes.c_char.from_buffer(hidden))
assert libc.mprotect(addr, 4096, mmap.PROT_READ | mmap.PROT_EXEC) == 0
print("ready", flush=True)
sys.stdin.read()
"""


def _trusted(path: Path) -> dict[tuple[int, int], str]:
    st = path.stat()
    return {(st.st_dev, st.st_ino): "libfake_xla.so"}


def _rewriter(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    lib = tmp_path / "libfake_xla.so"
    lib.write_bytes(b"\x90" * 4096)
    script = tmp_path / "rewriter.py"
    script.write_text(REWRITER)
    proc = subprocess.Popen([sys.executable, str(script), str(lib)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc, lib


def test_a_trusted_file_the_process_wrote_into_is_modified_not_the_runtime(tmp_path):
    proc, lib = _rewriter(tmp_path)
    try:
        maps = CodeMap(runtime=_trusted(lib), host={}).read(proc.pid)
    finally:
        proc.communicate("")
    assert maps is not None
    kinds = sorted(kind for _lo, _hi, kind, label in maps if label == "libfake_xla.so")
    # the untouched copy is the runtime's; the written and the re-protected ones are not
    assert kinds == ["modified", "modified", "xla_runtime"]


def test_the_kernel_view_records_it_and_the_judge_calls_it_tampered(tmp_path):
    proc, lib = _rewriter(tmp_path)
    view = KernelView(code=CodeMap(runtime=_trusted(lib), host={}))
    try:
        view.started(proc.pid)
        view.sample([proc.pid])
        view.finished()
    finally:
        proc.communicate("")
    result = view.result()
    mine = [p for p in result["processes"] if p["pid"] == proc.pid]
    assert mine and mine[0]["modified_code"] == ["libfake_xla.so"]
    assert mine[0]["runtime_libraries"] == ["libfake_xla.so"]  # the clean copy still counts
    assert profile(result).modified_code == ("libfake_xla.so",)


def test_an_honest_process_has_no_modified_code():
    maps = CodeMap().read(os.getpid())
    assert maps is not None and not [m for m in maps if m[2] == "modified"]
