"""Issue 42's front-end behaviour with real evaluations (slow: each grades the quickest practice
task's gold, references built once per session): successive evaluates into one run id merge and
`report` reads both; a first Ctrl-C lets the running evaluation finish, writes it and a rerun
resumes without grading it again; a second Ctrl-C ends the running one's processes at once.
tests/harness/test_front_ends.py checks the same with stand-ins, fast."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu2tpu.cli import main
from gpu2tpu.harness.interrupts import descendants
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.materialise import migration_patch

pytestmark = pytest.mark.slow
TASK = "varlen_cls"


def predictions(path: Path, *agents: str) -> Path:
    patch = migration_patch(find_task(TASK), "gold")
    path.write_text("".join(json.dumps({"schema_version": 1, "task_id": TASK, "agent": a, "patch": patch,
                                        "claimed_success": True}) + "\n" for a in agents))
    return path


def created(run: Path, agent: str) -> str:
    return str(json.loads((run / agent / TASK / "report.json").read_text())["created_at"])


def test_two_evaluates_into_one_run_id_both_stay_in_the_summary_and_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs, run = tmp_path / "runs", tmp_path / "runs" / "shared"
    for agent in ("agent-a", "agent-b"):
        assert main(["evaluate", "--predictions", str(predictions(tmp_path / f"{agent}.jsonl", agent)),
                     "--run-id", "shared", "--runs", str(runs)]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluations"] == [f"agent-a/{TASK}/report.json", f"agent-b/{TASK}/report.json"]
    assert summary["counts"] == {a: {"migrated": 1, "total": 1} for a in ("agent-a", "agent-b")}
    capsys.readouterr()
    assert main(["report", str(run), "--json"]) == 0
    assert sorted(r["agent"] for r in json.loads(capsys.readouterr().out)) == ["agent-a", "agent-b"]


def _evaluate(tmp_path: Path, preds: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gpu2tpu", "evaluate", "--predictions", str(preds),
                             "--run-id", "r", "--runs", str(tmp_path / "runs"), "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_until_running(proc: subprocess.Popen, eval_dir: Path) -> None:
    """Until the evaluation's folder exists (its references are built) and its run has started."""
    deadline = time.monotonic() + 1200
    while not (eval_dir.is_dir() and len(descendants(proc.pid)) > 0):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)


def test_a_first_ctrl_c_finishes_the_running_evaluation_and_a_rerun_resumes(tmp_path: Path) -> None:
    preds = predictions(tmp_path / "p.jsonl", "a", "b", "c")
    run = tmp_path / "runs" / "r"
    proc = _evaluate(tmp_path, preds)
    try:
        _wait_until_running(proc, run / "a" / TASK)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=1200)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "2 not started" in err and "run the same command again" in err, err
    assert json.loads((run / "summary.json").read_text())["evaluations"] == [f"a/{TASK}/report.json"]
    assert not (run / "b").exists() and not (run / "c").exists()
    first = created(run, "a")
    rerun = _evaluate(tmp_path, preds)
    out, err = rerun.communicate(timeout=1800)
    assert rerun.returncode == 0, err
    assert created(run, "a") == first  # reused by its cache key, not graded again
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluations"] == [f"{x}/{TASK}/report.json" for x in "abc"]


def test_a_second_ctrl_c_ends_the_running_evaluation_now(tmp_path: Path) -> None:
    preds = predictions(tmp_path / "p.jsonl", "a", "b")
    run = tmp_path / "runs" / "r"
    proc = _evaluate(tmp_path, preds)
    try:
        _wait_until_running(proc, run / "a" / TASK)
        below = descendants(proc.pid)
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "stopped now" in err, err
    assert not (run / "a" / TASK / "report.json").exists()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in below):
        assert time.monotonic() < deadline, f"processes of the stopped run outlived it: {below}"
        time.sleep(0.2)
