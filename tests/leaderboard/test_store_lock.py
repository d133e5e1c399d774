"""Two real processes on one store file (issue 42): a submit queues behind a reader or another
submit, a reader behind a submit, each saying on stderr that it waits and for how long at most;
past that bound, one line names the store and what to do. The lock is held here, in the test's
own process, exactly as DuckDB holds it for a `gpu2tpu` that reads or writes."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import lb_runfactory as rf
import pytest

from gpu2tpu.leaderboard.ingest import submit

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")
LB_CLI = str(Path(__file__).with_name("lb_cli.py"))  # gpu2tpu with the stand-in regrader
WAITING = "gpu2tpu: waiting for the leaderboard store "


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "lb store.duckdb"
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp"), rf.Eval("mnist", backend="cpu")])
    submit(run, rf.write_metadata(tmp_path / "a.yaml"), db)
    return db


def _run_for(tmp_path: Path, agent: str) -> list[str]:
    """`submit` arguments for a new run of `agent`."""
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp")], agent=agent, run_id=f"run-{agent}")
    return ["submit", str(run), "--metadata", str(rf.write_metadata(tmp_path / f"{agent}.yaml", agent=agent))]


def _start(argv: list[str], wait_s: float = 60) -> subprocess.Popen[str]:
    env = {**os.environ, "GPU2TPU_DB_WAIT": str(wait_s)}
    return subprocess.Popen([sys.executable, LB_CLI, *argv], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _first_line(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    """The first line the process writes to stderr ('' if it exits without one)."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            return proc.stderr.readline()
    proc.kill()
    raise AssertionError("no line on stderr")


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=120)
    return out, err


def _agents(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT DISTINCT agent FROM evaluations ORDER BY 1").fetchall()]
    finally:
        con.close()


def test_a_reader_waits_for_a_writer_and_says_so(store: Path) -> None:
    writer = duckdb.connect(str(store))  # what a submit holds while it writes
    try:
        reader = _start(["leaderboard", "agents", "--db", str(store), "--format", "csv"])
        line = _first_line(reader)
        assert line.startswith(WAITING + str(store)), line
        assert f"(PID {os.getpid()})" in line and "up to 60 s" in line, line
    finally:
        writer.close()
    out, err = _finish(reader)
    assert reader.returncode == 0, err
    assert out.splitlines()[1].split(",")[1] == "agent-a" and err == ""


def test_submits_queue_behind_a_reader_and_each_other(store: Path, tmp_path: Path) -> None:
    reader = duckdb.connect(str(store), read_only=True)  # what `leaderboard agents` holds
    try:
        submits = [_start([*_run_for(tmp_path, agent), "--db", str(store)]) for agent in ("b", "c")]
        for proc in submits:
            line = _first_line(proc)
            assert line.startswith(WAITING + str(store)) and "up to 60 s" in line, line
    finally:
        reader.close()
    for proc in submits:  # one writes while the other waits on: both land
        out, err = _finish(proc)
        assert proc.returncode == 0, err
        assert out.startswith("submitted 1 evaluations (verified)") and "Traceback" not in err
    assert _agents(store) == ["agent-a", "b", "c"]


def test_the_wait_is_bounded_and_ends_in_one_line(store: Path, tmp_path: Path) -> None:
    writer = duckdb.connect(str(store))
    try:
        for argv in (["leaderboard", "costs", "--db", str(store)],
                     [*_run_for(tmp_path, "d"), "--db", str(store)]):
            proc = _start(argv, wait_s=1.5)
            line = _first_line(proc)
            started = time.monotonic()
            assert line.startswith(WAITING + str(store)) and "up to 1.5 s" in line, line
            out, err = _finish(proc)
            assert time.monotonic() - started < 10  # the bound, not the writer, ends the wait
            assert proc.returncode == 2 and out == ""
            (error,) = err.splitlines()
            assert error.startswith("gpu2tpu: error: "), error
            assert f"the leaderboard store {store} is still in use by another gpu2tpu or DuckDB " \
                   f"process (PID {os.getpid()}) after 1.5 s; run this again when it has " \
                   "finished, or wait longer with GPU2TPU_DB_WAIT=SECONDS" in error, error
    finally:
        writer.close()
    assert _agents(store) == ["agent-a"]  # the refused submit wrote nothing
