"""`gpu2tpu evaluate`, `report` and `demo` as a user meets them (issue 42): bad input refused up
front with one line and exit 2, Ctrl-C that stops queued work and says how to resume, one run
directory that many evaluates merge into, and output that says why and what next.

Nothing here trains a model: the reference bundles and the evaluations are stand-ins that write a
report.json as the real ones do (tests/harness/test_front_ends_slow.py grades for real)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpu2tpu.harness.evaluate as evaluate_module
import gpu2tpu.judge.regrade as regrade_module
from gpu2tpu.cli import main
from gpu2tpu.errors import UserError
from gpu2tpu.harness import node_facts
from gpu2tpu.judge.criteria import CRITERION_NAMES, CriterionResult
from gpu2tpu.judge.verdict import combine
from gpu2tpu.record.report import REPORT, RunLayout

TASK = "cifar_amp"


def verdict(failing: dict[str, list[tuple[bool, str, str | None]]] | None = None) -> dict[str, Any]:
    """A verdict as the judge writes one: `failing` maps a criterion to its evidence lines (ok,
    text, category); every other criterion passes with one line."""
    failing = failing or {}
    results = {n: CriterionResult(n, [{"ok": ok, "text": text, "category": cat}
                                      for ok, text, cat in failing.get(n, [(True, f"{n} ok", None)])])
               for n in CRITERION_NAMES}
    return combine(results, exited_zero=True)


WRONG_DEVICE = verdict({"hardware": [(True, "compiled 3 graphs", None),
                                     (False, "loss computed on cpu, not xla", "wrong_device")],
                        "performance": [(False, "step time 9.1 s, limit 2.0 s", "slow"),
                                        (False, "host reads every step", "host_sync")]})


class Grading:
    """Stand-ins for the reference builds and the evaluations: `calls` lists each evaluation's
    label as it starts; `gate` (when set) holds every evaluation until it is set."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.started = threading.Event()
        self.gate: threading.Event | None = None
        self.active: dict[str, int] = {}
        self.overlapped: list[str] = []
        self.lock = threading.Lock()

    def evaluate_one(self, spec: Any, pred: Any, layout: RunLayout, ref: Any, target: Any,
                     timeout_s: float | None = None) -> Any:
        with self.lock:
            self.calls.append(pred.label)
            self.active[pred.label] = self.active.get(pred.label, 0) + 1
            if self.active[pred.label] > 1:
                self.overlapped.append(pred.label)
        self.started.set()
        try:
            if self.gate is not None:
                assert self.gate.wait(30), "the test never opened the gate"
            else:
                time.sleep(0.05)
            eval_dir = layout.evaluation(pred.agent, pred.task_id, pred.attempt)
            eval_dir.mkdir(parents=True, exist_ok=True)
            report = evaluate_module._report(spec, pred, layout, target, verdict=WRONG_DEVICE
                                             if pred.agent.startswith("broken") else verdict())
            report.write(eval_dir / REPORT)
            return report
        finally:
            with self.lock:
                self.active[pred.label] -= 1


@pytest.fixture
def grading(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Grading:
    fake = Grading()

    def references(spec: Any, target: Any, log: Any) -> tuple[str, Path]:
        bundle = tmp_path / "bundles" / spec.task_id
        bundle.mkdir(parents=True, exist_ok=True)
        return f"key-{spec.task_id}", bundle

    def copy(cached: Path, dest: Path) -> dict[str, str]:
        dest.mkdir(parents=True, exist_ok=True)
        return {}

    monkeypatch.setattr(evaluate_module, "ensure_references", references)
    monkeypatch.setattr(evaluate_module, "copy_references", copy)
    monkeypatch.setattr(evaluate_module, "evaluate_one", fake.evaluate_one)
    monkeypatch.setattr(node_facts, "detect", lambda *a, **k: {"schema_version": 1, "hostname": "h"})
    # `gpu2tpu report` grades again from the traces, which the stand-ins do not write
    monkeypatch.setattr(regrade_module, "regrade", lambda report, path: {"verdict": report.verdict})
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    return fake


def line(agent: str, task: str = TASK, **extra: Any) -> str:
    return json.dumps({"schema_version": 1, "task_id": task, "agent": agent,
                       **({"patch": "diff"} if "migrated_dir" not in extra else {}), **extra}) + "\n"


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(lines))
    return path


def evaluate(capsys: pytest.CaptureFixture[str], preds: Path, runs: Path, *extra: str,
             run_id: str = "r") -> tuple[int, str, str]:
    rc = main(["evaluate", "--predictions", str(preds), "--run-id", run_id, "--runs", str(runs), *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(err: str) -> str:
    """The error line of a refused command (exactly one `gpu2tpu: error:` line, no traceback)."""
    lines = [x for x in err.splitlines() if x.startswith("gpu2tpu: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- inputs checked before anything runs ------------------------------------------------------


def test_a_broken_line_refuses_the_whole_file_naming_every_bad_line(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = write(tmp_path / "p.jsonl", line("a"), "{not json\n", line("b"),
                  json.dumps({"schema_version": 1, "task_id": TASK, "patch": "x"}) + "\n")
    rc, _, err = evaluate(capsys, preds, tmp_path / "runs")
    assert rc == 2, err
    assert "line 2: not valid JSON" in err and "line 4: 'agent' must be" in err, err
    assert "nothing was run" in one_line_error(err)
    assert grading.calls == [] and not (tmp_path / "runs").exists()


def test_an_empty_predictions_file_is_refused(grading: Grading, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for content in ("", "\n  \n"):
        rc, _, err = evaluate(capsys, write(tmp_path / "p.jsonl", content), tmp_path / "runs")
        assert rc == 2 and "holds no predictions" in one_line_error(err), err
    assert not (tmp_path / "runs").exists()


def test_tasks_naming_an_unknown_task_is_refused_naming_it_and_the_known_ones(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = write(tmp_path / "p.jsonl", line("a"))
    rc, _, err = evaluate(capsys, preds, tmp_path / "runs", "--tasks", TASK, "cifar_ampp")
    message = one_line_error(err)
    assert rc == 2 and "'cifar_ampp'" in message and "did you mean cifar_amp" in message, err
    assert "known tasks:" in message and "varlen_cls" in message, err
    assert grading.calls == [] and not (tmp_path / "runs").exists()


def test_an_unknown_task_in_a_line_is_refused_naming_the_line(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = write(tmp_path / "p.jsonl", line("a"), line("b", task="no_such_task"))
    rc, _, err = evaluate(capsys, preds, tmp_path / "runs")
    assert rc == 2 and "line 2: unknown task 'no_such_task'" in err, err
    assert grading.calls == []


def test_a_selection_that_leaves_nothing_to_grade_is_refused(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = write(tmp_path / "p.jsonl", line("a"), line("b"))
    rc, _, err = evaluate(capsys, preds, tmp_path / "runs", "--tasks", "varlen_cls")
    message = one_line_error(err)
    assert rc == 2 and "selects none of the 2 predictions" in message and TASK in message, err
    assert grading.calls == []


@pytest.mark.parametrize("flags, named", [
    (["--workers", "0"], "--workers 0"), (["--workers", "-1"], "--workers -1"),
    (["--timeout", "0"], "--timeout 0"), (["--timeout", "-5"], "--timeout -5"),
    (["--timeout", "nan"], "--timeout nan")])
def test_counts_that_cannot_work_are_refused(grading: Grading, tmp_path: Path, flags: list[str],
                                             named: str, capsys: pytest.CaptureFixture[str]) -> None:
    preds = write(tmp_path / "p.jsonl", line("a"))
    rc, _, err = evaluate(capsys, preds, tmp_path / "runs", *flags)
    assert rc == 2 and named in one_line_error(err), err
    assert grading.calls == [] and not (tmp_path / "runs").exists()


def test_demo_refuses_workers_below_one(grading: Grading, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    for n in ("0", "-1"):
        rc = main(["demo", "--runs", str(tmp_path / "runs"), "--workers", n])
        assert rc == 2 and f"--workers {n}" in one_line_error(capsys.readouterr().err)
    assert grading.calls == []


@pytest.mark.parametrize("run_id", ["../../escape", "ABSOLUTE", "bad name; $(id)", ".hidden", "a/b", ""])
def test_a_run_id_must_be_a_plain_name_inside_runs(grading: Grading, tmp_path: Path, run_id: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run_id = str(tmp_path / "elsewhere") if run_id == "ABSOLUTE" else run_id
    work = tmp_path / "deep" / "er"
    work.mkdir(parents=True)
    preds = write(tmp_path / "p.jsonl", line("a"))
    rc, _, err = evaluate(capsys, preds, work / "runs", run_id=run_id)
    assert rc == 2 and "--run-id" in one_line_error(err), err
    assert grading.calls == []
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["er"] and list(work.iterdir()) == []
    assert not (tmp_path / "elsewhere").exists()


def test_validate_refuses_a_bad_run_id_and_workers(grading: Grading, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    base = ["validate", "--tasks", "varlen_cls", "--rerun", "--no-record", "--runs", str(tmp_path / "runs")]
    for extra, named in ((["--run-id", "../x"], "--run-id"), (["--workers", "0"], "--workers 0")):
        rc = main([*base, *extra])
        assert rc == 2 and named in one_line_error(capsys.readouterr().err)
    assert grading.calls == [] and not (tmp_path / "x").exists()


@pytest.mark.parametrize("where", ["missing", "a file"])
def test_a_migrated_dir_that_is_not_there_is_the_submitters_input_error(
        grading: Grading, tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> None:
    if where == "a file":
        (tmp_path / "tree").write_text("not a folder")
    preds = write(tmp_path / "p.jsonl", line("a"), line("b", migrated_dir="tree"))
    rc, _, err = evaluate(capsys, preds, tmp_path / "runs")
    assert rc == 2 and "line 2: migrated_dir" in err and str(tmp_path / "tree") in err, err
    assert grading.calls == [] and not (tmp_path / "runs").exists()


def test_prediction_errors_are_user_errors() -> None:
    from gpu2tpu.harness.predictions import PredictionError

    assert issubclass(PredictionError, UserError)


# --- one run directory, many evaluates ------------------------------------------------------------


def test_successive_evaluates_into_one_run_id_keep_every_report(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    assert evaluate(capsys, write(tmp_path / "a.jsonl", line("agent-a")), runs)[0] == 0
    assert evaluate(capsys, write(tmp_path / "b.jsonl", line("broken-b")), runs)[0] == 0
    summary = json.loads((runs / "r" / "summary.json").read_text())
    assert summary["evaluations"] == [f"agent-a/{TASK}/report.json", f"broken-b/{TASK}/report.json"]
    assert summary["counts"] == {"agent-a": {"migrated": 1, "total": 1},
                                 "broken-b": {"migrated": 0, "total": 1}}
    assert summary["errors"] == [] and summary["run_id"] == "r" and summary["schema_version"] == 1
    rc = main(["report", str(runs / "r")])
    out = capsys.readouterr().out
    assert rc == 0 and "agent-a" in out and "broken-b" in out


def test_concurrent_evaluates_into_one_run_id_merge_and_never_grade_one_thing_twice_at_once(
        grading: Grading, tmp_path: Path) -> None:
    from gpu2tpu.harness.evaluate import evaluate_predictions

    runs = tmp_path / "runs"
    a = write(tmp_path / "a.jsonl", line("agent-a"), line("shared"))
    b = write(tmp_path / "b.jsonl", line("agent-b"), line("shared"))
    grading.gate = threading.Event()
    errors: list[BaseException] = []

    def run(preds: Path) -> None:
        try:
            evaluate_predictions(preds, "r", runs, workers=2)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(p,)) for p in (a, b)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    grading.gate.set()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert grading.overlapped == []
    summary = json.loads((runs / "r" / "summary.json").read_text())
    assert summary["evaluations"] == [f"{x}/{TASK}/report.json" for x in ("agent-a", "agent-b", "shared")]
    assert sum(c["total"] for c in summary["counts"].values()) == 3


def test_report_reads_every_report_on_disk_even_without_a_summary(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run stopped hard (a second Ctrl-C) leaves its finished reports and maybe no summary."""
    runs = tmp_path / "runs"
    assert evaluate(capsys, write(tmp_path / "a.jsonl", line("agent-a"), line("agent-b")), runs)[0] == 0
    (runs / "r" / "summary.json").unlink()
    rc = main(["report", str(runs / "r")])
    out = capsys.readouterr().out
    assert rc == 0 and "agent-a" in out and "agent-b" in out
    rc = main(["report", str(tmp_path)])
    assert rc == 2 and "no summary.json" in one_line_error(capsys.readouterr().err)


# --- interrupts ---------------------------------------------------------------------------------


def _interrupt_when(event: threading.Event) -> threading.Thread:
    def fire() -> None:
        assert event.wait(30)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    return thread


def test_the_first_ctrl_c_stops_queued_work_writes_what_finished_and_says_how_to_resume(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    preds = write(tmp_path / "p.jsonl", line("a"), line("b"), line("c"))
    noticed, log = threading.Event(), evaluate_module.log

    def noticing(message: str) -> None:
        log(message)
        if message.startswith("interrupted:"):
            noticed.set()

    monkeypatch.setattr(evaluate_module, "log", noticing)
    grading.gate = noticed  # the running evaluation ends once the interrupt was noticed
    _interrupt_when(grading.started)
    rc, out, err = evaluate(capsys, preds, runs, "--workers", "1")
    assert rc == 130, err
    assert grading.calls == [f"a/{TASK}"], grading.calls  # b and c never started
    summary = json.loads((runs / "r" / "summary.json").read_text())
    assert summary["evaluations"] == [f"a/{TASK}/report.json"]
    assert (runs / "r" / "a" / TASK / "node.json").is_file()
    assert "2 not started" in err and "run the same command again" in err, err
    assert f"--run-id r --runs {runs}" in err and "a" in out, err
    # resuming grades only what did not finish (the stand-in does not reuse; the real one does)
    grading.gate = None
    rc, out, err = evaluate(capsys, preds, runs, "--workers", "1")
    assert rc == 0 and set(grading.calls) == {f"{x}/{TASK}" for x in "abc"}


_HARD_STOP = textwrap.dedent("""
    import os, subprocess, sys, time
    from pathlib import Path
    import gpu2tpu.harness.evaluate as ev
    from gpu2tpu.cli import main
    root = Path(sys.argv[1])

    def refs(spec, target, log):
        (root / "bundle").mkdir(exist_ok=True)
        return "key", root / "bundle"

    def copy(cached, dest):
        dest.mkdir(parents=True, exist_ok=True)
        return {}

    def evaluate_one(spec, pred, layout, ref, target, timeout_s=None):
        child = subprocess.Popen(["sleep", "300"], start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (root / "child.pid").write_text(str(child.pid))
        child.wait()
        (root / "wrote-a-report").write_text("the killed run was graded")
        raise SystemExit("unreachable")

    ev.ensure_references, ev.copy_references, ev.evaluate_one = refs, copy, evaluate_one
    sys.exit(main(["evaluate", "--predictions", sys.argv[2], "--run-id", "r",
                   "--runs", str(root / "runs")]))
""")


def test_a_second_ctrl_c_ends_everything_now(tmp_path: Path) -> None:
    script = write(tmp_path / "hard_stop.py", _HARD_STOP)
    preds = write(tmp_path / "p.jsonl", line("a"), line("b"))
    env = {**os.environ, "GPU2TPU_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path), str(preds)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = 0
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "child.pid").is_file():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        child = int((tmp_path / "child.pid").read_text())
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # the first lets the running evaluation end
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "stopped now" in err, err
    assert not (tmp_path / "wrote-a-report").exists()
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the running evaluation's process outlived the stop"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- what the user sees ---------------------------------------------------------------------------


@pytest.fixture
def failing_run(grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Path]:
    runs = tmp_path / "runs"
    rc, _, _ = evaluate(capsys, write(tmp_path / "p.jsonl", line("gold"), line("broken-x")), runs)
    assert rc == 0
    yield runs / "r"


def test_report_shows_the_deciding_evidence_of_each_failing_criterion(
        failing_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(failing_run)]) == 0
    out = capsys.readouterr().out
    assert f"broken-x/{TASK}: wrong_device (silent)" in out, out
    assert "hardware: loss computed on cpu, not xla" in out, out
    assert "performance: host reads every step" in out, out  # host_sync decides before slow
    assert "compiled 3 graphs" not in out and "step time 9.1 s" not in out and "gold/" not in out, out
    assert main(["report", str(failing_run), "--evidence"]) == 0
    out = capsys.readouterr().out
    for text in ("compiled 3 graphs", "step time 9.1 s", "loss computed on cpu", "numerics ok"):
        assert text in out, out


def test_demo_ends_with_where_its_results_are_and_what_to_run_next(
        grading: Grading, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    main(["demo"])
    out = capsys.readouterr().out
    tail = out.strip().splitlines()[-3:]
    assert "runs/demo" in tail[0], out
    assert tail[1].strip() == "gpu2tpu report runs/demo", out
    assert tail[2].strip() == "gpu2tpu submit runs/demo --metadata examples/demo.yaml", out


@pytest.mark.parametrize("command", ["evaluate", "report", "demo"])
def test_help_shows_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    example = re.split(r"examples?:", out, maxsplit=1)[1]
    assert f"gpu2tpu {command}" in example, out
