"""Time spent waiting is not excused as a busy machine: real sandboxed runs, timed by the harness.

A migration whose steps sleep spends wall time, not CPU time; with only the CPU-time excuse for a
busy machine it passed. One that also starts processes to keep the machine busy while it sleeps
makes that load itself: the harness sets aside only other processes' share of the machine.
"""

from __future__ import annotations

from pathlib import Path

from gpu2tpu.judge.criteria import CriterionResult
from gpu2tpu.judge.timing import check_times
from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.sandbox.process import clean_env

TRAIN = """
import os, subprocess, sys, time, torch
SLEEP = float(sys.argv[1])
burners = []
if sys.argv[2] == "burn":  # keep every core busy while the steps sleep
    spin = "import time\\nt = time.monotonic()\\nwhile time.monotonic() - t < 60: pass"
    burners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(os.cpu_count() or 1)]
model = torch.nn.Linear(64, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    t = time.process_time()
    while time.process_time() - t < 0.05: pass
    loss = model(torch.ones(8, 64)).sum()
    loss.backward()
    time.sleep(SLEEP)
    opt.step()
    opt.zero_grad()
for b in burners:
    b.kill()
"""


def _record(tmp_path: Path, name: str, sleep: float, burn: bool) -> RunRecord:
    work = tmp_path / name
    work.mkdir()
    (work / "train.py").write_text(TRAIN)
    res = run_probed(["train.py", str(sleep), "burn" if burn else "-"], work, work / "out",
                     clean_env(), 120)
    assert res.exit_code == 0, (work / "out" / "stderr.log").read_text()
    process: dict = {"wall_s": res.wall_s, "cpu_s": res.cpu_s}
    process["others_cpu_share"] = res.others_share
    return RunRecord(process=process, trace=Trace.load(work / "out" / "trace.jsonl"), goal={})


def _step_line(gold: RunRecord, cand: RunRecord) -> dict:
    res = CriterionResult("performance")
    check_times(res, 3.0, cand, gold, 2, emulated=True)
    return next(e for e in res.evidence if e["text"].startswith("median step time"))


def test_sleeping_steps_are_slow_even_beside_their_own_burners(tmp_path: Path) -> None:
    gold = _record(tmp_path, "gold", 0.0, burn=False)
    for name, burn in (("sleeper", False), ("burner", True)):
        line = _step_line(gold, _record(tmp_path, name, 0.4, burn=burn))
        assert not line["ok"] and line["category"] == "slow", line
        assert "CPU time" in line["text"] and "net of them" in line["text"], line
