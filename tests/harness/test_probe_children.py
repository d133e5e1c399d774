"""The probe in a run's forked children (DataLoader and Pool workers): a SIGTERM ends them as it
would without the probe, and nothing they do writes the run's end (record/probe.py)."""

from __future__ import annotations

import json
from pathlib import Path

from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.trace import Trace
from gpu2tpu.sandbox.process import clean_env

# Three steps, then a forked worker that waits on a queue forever, as an idle Pool worker does; the
# run ends it with SIGTERM, as a Pool's finalizer does, and reports how it ended.
TERMINATED_WORKER = """
import multiprocessing as mp, torch
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.ones(2, 4)).sum().backward()
    opt.step()
    opt.zero_grad()
ctx = mp.get_context("fork")
queue = ctx.SimpleQueue()
worker = ctx.Process(target=queue.get)
worker.start()
worker.terminate()
worker.join(30)
print("worker exitcode", worker.exitcode)
"""


def test_a_terminated_worker_ends_by_default_and_writes_no_end(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TERMINATED_WORKER)
    res = run_probed(["train.py"], tmp_path, tmp_path / "out", clean_env(), 120)
    out = tmp_path / "out"
    assert res.exit_code == 0, (out / "stderr.log").read_text()
    # killed by the signal itself (-15), not by the probe's handler (exit 143) or still alive (None)
    assert "worker exitcode -15" in (out / "stdout.log").read_text()
    events = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    ends = [e for e in events if e["event"] == "end"]
    assert len(ends) == 1 and ends[0]["exit_code"] == 0, ends
    assert Trace.load(out / "trace.jsonl").end["steps"] == 3
