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


# The project seeds; torch seeds each DataLoader worker from the main process's generator (its
# own machinery, which a migration drawing from that generator differently moves).
SEEDED_WORKERS = """
import random, numpy as np, torch
random.seed(1); np.random.seed(2); torch.manual_seed(3)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(8, 4)), batch_size=4,
                                     num_workers=2, multiprocessing_context="fork")
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for (x,) in loader:
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
"""


def test_seeds_torch_sets_in_its_workers_name_torch_as_the_caller(tmp_path: Path) -> None:
    from gpu2tpu.judge.invariants import seed_values

    (tmp_path / "train.py").write_text(SEEDED_WORKERS)
    res = run_probed(["train.py"], tmp_path, tmp_path / "out", clean_env(), 120)
    assert res.exit_code == 0, (tmp_path / "out" / "stderr.log").read_text()
    trace = Trace.load(tmp_path / "out" / "trace.jsonl")
    by = {(s["fn"], s.get("by")) for s in trace.seeds}
    assert {("random.seed", "__main__"), ("numpy.random.seed", "__main__"),
            ("torch.manual_seed", "__main__")} <= by, by
    workers = [s for s in trace.seeds if str(s.get("by")).startswith("torch.")]
    assert len(workers) >= 2 * 2, trace.seeds  # each of the 2 workers: random and torch at least
    # the judge compares the project's seeds only
    assert seed_values(trace) == {"random.seed": [1], "numpy.random.seed": [2], "torch.manual_seed": [3]}


# A library that asks whether torch_xla is installed (importlib.util.find_spec, as transformers
# does) before anything imports it: torch_xla's import then replaces clip_grad_norm_, and the probe
# must wrap it again. The lookup used to consume the probe's one post-import hook, so an honest
# CPU run that imports transformers was graded `tampered` (CodeT5's noop baseline).
LOOKED_UP_FIRST = """
import importlib.util, torch
assert importlib.util.find_spec("torch_xla") is not None
import torch_xla  # noqa: F401
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.ones(2, 4)).sum().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad()
"""


def test_a_module_looked_up_before_its_import_still_gets_the_hooks(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(LOOKED_UP_FIRST)
    env = {**clean_env(), "PJRT_DEVICE": "CPU", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    res = run_probed(["train.py"], tmp_path, tmp_path / "out", env, 300)
    assert res.exit_code == 0, (tmp_path / "out" / "stderr.log").read_text()
    trace = Trace.load(tmp_path / "out" / "trace.jsonl")
    assert trace.integrity == {"event": "integrity", "rebound": []}, trace.integrity
    assert all(s.get("clip") for s in trace.applied), trace.applied  # every clip recorded
