"""Kept evidence (harness/evidence.py): `validate` keeps a task's labelled runs sealed, and a change
under judge/ alone re-validates the task by re-grading them, running nothing; a change under
record/ (or a kept run altered after it was sealed) runs the suite again. Graded for real on a
copy of a practice task."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from gpu2tpu import rooms
from gpu2tpu.cli import main
from gpu2tpu.harness import evidence, validated
from gpu2tpu.record.execution import MANIFEST, write_manifest
from gpu2tpu.record.report import TRACE
from gpu2tpu.record.targets import get_target
from gpu2tpu.sandbox.process import sandbox_mode
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, add_task_dirs, find_task
from gpu2tpu.tasks.spec import VALIDATED_FILE

TASK = "varlen_cls"

pytestmark = pytest.mark.slow


@pytest.fixture
def task_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(TASK_DIRS_ENV, "")
    shutil.copytree(find_task(TASK).task_dir, tmp_path / "tasks" / TASK,
                    ignore=shutil.ignore_patterns("__pycache__", VALIDATED_FILE))
    add_task_dirs([tmp_path / "tasks"])
    return tmp_path / "tasks" / TASK


def test_a_judge_change_re_grades_the_kept_runs_and_a_recorder_change_runs_them(
        task_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", "--changed", "--tasks", TASK, "--runs", str(tmp_path / "runs")]
    assert main(args) == 0
    ran = json.loads((task_copy / VALIDATED_FILE).read_text())
    assert ran["how"] == "ran" and ran["judge"] == rooms.judge_hash()
    assert ran["evidence"]["digest"] and ran["references"]["reference_device"] == "cpu"
    kept = evidence.kept(find_task(TASK), get_target("xla-cpu"), sandbox_mode())
    assert kept is not None and len(kept[1]) == ran["migrations"]
    capsys.readouterr()

    # an edit under judge/: only the judge hash moves
    monkeypatch.setattr(rooms, "judge_hash", lambda: "f" * 64)
    started = time.monotonic()
    assert main(args) == 0
    took = time.monotonic() - started
    out = capsys.readouterr().out
    assert "re-graded from its kept runs: the judging code" in out, out
    regraded = json.loads((task_copy / VALIDATED_FILE).read_text())
    assert regraded["how"] == "regraded" and regraded["judge"] == "f" * 64
    assert regraded["wall_s"] == ran["wall_s"] and regraded["evidence"] == ran["evidence"]
    assert took < 30, f"re-grading kept runs took {took:.0f} s"
    assert "0 of" not in out and f"{ran['migrations']} of {ran['migrations']} migrations" in out

    # a kept run altered after it was sealed is never graded again
    root, reports = kept
    trace = (root / reports[0]).parent / TRACE
    trace.write_text(trace.read_text() + "\n")
    write_manifest(root)
    assert evidence.kept(find_task(TASK), get_target("xla-cpu"), sandbox_mode()) is None
    assert (root / MANIFEST).is_file()

    # an edit under record/: another key, nothing kept under it
    monkeypatch.setattr(rooms, "recorder_hash", lambda: "e" * 64)
    assert evidence.kept(find_task(TASK), get_target("xla-cpu"), sandbox_mode()) is None
    assert validated.changed(find_task(TASK)).startswith("the recording code")
