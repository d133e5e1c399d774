"""A candidate that writes its own records into the probe's channel (a trace recorded elsewhere,
replayed; forged steps) is graded `tampered`: the probe writes one start record first, in the
directory the harness ran it in, and numbers its steps upwards."""

from __future__ import annotations

import json
from pathlib import Path

from gpu2tpu.judge.criteria import CriterionResult
from gpu2tpu.judge.invariants import check_integrity
from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.trace import Trace
from gpu2tpu.sandbox.process import clean_env

# Trains honestly on the CPU for two steps, then replays "a better run" into every pipe it holds.
FORGER = """
import json, os, torch
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad(); model(torch.randn(8, 4)).pow(2).mean().backward(); opt.step()
recorded = [{"event": "start", "cwd": os.environ.get("REPLAY_CWD") or os.getcwd(), "argv": ["train.py"]}]
recorded += [{"event": "step", "step": i, "loss": 1.0 / (i + 1), "devices": ["xla:0"]} for i in range(5)]
for fd in os.listdir("/proc/self/fd"):
    try:
        if int(fd) > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
            os.write(int(fd), "".join(json.dumps(r) + "\\n" for r in recorded).encode())
    except OSError:
        pass
"""


def _run(tmp_path: Path, replay_cwd: str = "") -> tuple[Trace, dict]:
    work = tmp_path / "project"
    work.mkdir()
    (work / "train.py").write_text(FORGER)
    env = clean_env({"REPLAY_CWD": replay_cwd} if replay_cwd else {})
    res = run_probed(["train.py"], work, tmp_path / "out", env, 120)
    assert res.exit_code == 0, (tmp_path / "out" / "stderr.log").read_text()
    return Trace.load(tmp_path / "out" / "trace.jsonl"), {"cwd": str(work.resolve())}


def _tampered(trace: Trace, process: dict) -> list[str]:
    res = CriterionResult("runs")
    check_integrity(res, Trace(), trace, process)
    return [e["text"] for e in res.evidence if e["category"] == "tampered"]


def test_records_written_into_the_probe_channel_are_tampered(tmp_path: Path) -> None:
    trace, process = _run(tmp_path)
    found = _tampered(trace, process)
    assert found and "second start record" in found[0], found
    assert "step 0 after step" in found[0]
    assert trace.start["cwd"] == process["cwd"]  # the probe's own start record is the one kept


def test_trace_recorded_in_another_directory_is_tampered(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"  # a whole trace replayed from another machine's run
    trace.write_text("".join(json.dumps(r) + "\n" for r in [
        {"event": "start", "cwd": "/home/attacker/run/project"},
        {"event": "step", "step": 0, "loss": 1.0}, {"event": "end", "exit_code": 0}]))
    found = _tampered(Trace.load(trace), {"cwd": str(tmp_path / "project")})
    assert found and "another working directory" in found[0], found


def test_an_honest_trace_is_not_tampered(tmp_path: Path) -> None:
    honest = tmp_path / "honest"
    honest.mkdir()
    (honest / "project").mkdir()
    (honest / "project" / "train.py").write_text(FORGER.split("recorded =")[0])
    res = run_probed(["train.py"], honest / "project", honest / "out", clean_env(), 120)
    assert res.exit_code == 0
    trace = Trace.load(honest / "out" / "trace.jsonl")
    assert not trace.anomalies and len(trace.steps) == 2
    assert not _tampered(trace, {"cwd": str((honest / "project").resolve())})
