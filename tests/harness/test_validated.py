"""validated.json: what a task's last whole labelled suite proved, and CI's choice of what to grade
again (every gold; whole suites only where the task, the grading code or torch changed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpu2tpu import rooms
from gpu2tpu.harness import validated
from gpu2tpu.harness.validate import expected, plan
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, add_task_dirs, find_task
from gpu2tpu.tasks.spec import VALIDATED_FILE, load_spec


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(TASK_DIRS_ENV, "")
    for name in ("varlen_cls", "charlm"):  # copies without their shipped records
        shutil.copytree(find_task(name).task_dir, tmp_path / "mine" / name,
                        ignore=shutil.ignore_patterns("__pycache__", VALIDATED_FILE))
    add_task_dirs([tmp_path / "mine"])
    return tmp_path / "mine" / "varlen_cls"


def test_a_record_holds_until_the_task_or_the_grading_code_changes(task: Path):
    spec = load_spec(task)
    assert validated.changed(spec) == "never validated"
    validated.write(spec, migrations=5, wall_s=12.3, how="ran")
    record = json.loads((task / VALIDATED_FILE).read_text())
    assert record["content_hash"] == spec.content_hash and record["migrations"] == 5
    assert record["recorder"] == rooms.recorder_hash() and record["judge"] == rooms.judge_hash()
    assert load_spec(task).content_hash == spec.content_hash  # the record is not part of the task
    assert validated.changed(load_spec(task)) is None and not validated.judge_only(load_spec(task))
    assert validated.changed(load_spec(task), recorder="0" * 64).startswith("the recording code")
    assert validated.changed(load_spec(task), judge="0" * 64).startswith("the judging code")
    (task / "migrations" / "broken" / "dynamic_padding.yaml").write_text("category: crash\n")
    assert validated.changed(load_spec(task)) == "the task's files changed since it was validated"


def test_a_judge_change_alone_is_re_graded_a_recorder_change_is_run(task: Path):
    spec = load_spec(task)
    validated.write(spec, migrations=5, wall_s=12.3, how="ran")
    record = json.loads((task / VALIDATED_FILE).read_text())
    (task / VALIDATED_FILE).write_text(json.dumps({**record, "judge": "0" * 64}))
    assert validated.judge_only(spec)
    (task / VALIDATED_FILE).write_text(json.dumps({**record, "judge": "0" * 64, "recorder": "1" * 64}))
    assert not validated.judge_only(spec)


def test_ci_grades_every_gold_and_the_whole_suite_of_changed_tasks(task: Path):
    validated.write(load_spec(task), migrations=5, wall_s=1.0, how="ran")
    gold_only, whole = plan(["varlen_cls", "charlm"], changed_only=True)
    assert gold_only == {"varlen_cls"} and set(whole) == {"charlm"}
    assert plan(["varlen_cls"], changed_only=False) == (frozenset(), {"varlen_cls": "asked for"})


def test_labels_match_in_any_order_and_unknown_criteria_say_so():
    assert expected("slow", ("performance", "hardware"), True) == ("slow", ("hardware", "performance"), True)
    assert expected("crash", ("speed",), False)[1] == ("unknown criterion 'speed'",)


def test_validate_builds_later_tasks_references_while_the_first_is_graded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold bundle's runs are sequential: while one task is graded, the next tasks' references
    are built beside it (stand-ins for both: this checks the order, not the runs)."""
    import threading

    from gpu2tpu.cli import main
    from gpu2tpu.harness import references
    from gpu2tpu.harness import validate as validate_module

    asked: list[str] = []
    second = threading.Event()

    def fake_references(spec, target, progress):
        asked.append(spec.task_id)
        second.set()
        return "key", tmp_path

    seen_while_grading: dict[str, bool] = {}

    def grade(task_ids, runs, run_id, workers, target, gold_only, engine):
        seen_while_grading[task_ids[0]] = second.wait(30)
        return [], {}, {"evaluations": [], "counts": {}, "errors": []}

    monkeypatch.setattr(references, "ensure_references", fake_references)
    monkeypatch.setattr(validate_module, "validate", grade)
    assert main(["validate", "--tasks", "varlen_cls", "charlm", "--runs", str(tmp_path / "runs"),
                 "--run-id", "r", "--no-record"]) == 0
    assert seen_while_grading["varlen_cls"] and asked == ["charlm"]


def test_ci_grades_whole_suites_only_where_a_tasks_own_files_changed(task: Path):
    """A grading-code change lapses every record, but CI grows with what a change touched: it
    grades the golds of lapsed records, and whole suites only of tasks whose own files changed
    (or never validated); `validate --all` is what writes the lapsed records again."""
    from gpu2tpu.harness.ci_selection import ci_plan

    spec = load_spec(task)
    validated.write(spec, migrations=5, wall_s=1.0, how="ran")
    record = json.loads((task / VALIDATED_FILE).read_text())
    (task / VALIDATED_FILE).write_text(json.dumps({**record, "recorder": "0" * 64}))
    gold_only, whole, lapsed = ci_plan(["varlen_cls", "charlm"], key="")
    assert gold_only == {"varlen_cls"} and set(whole) == {"charlm"}  # charlm: never validated
    assert lapsed["varlen_cls"].startswith("the recording code")
    (task / "migrations" / "broken" / "dynamic_padding.yaml").write_text("category: crash\n")
    gold_only, whole, _ = ci_plan(["varlen_cls"], key="")
    assert not gold_only and whole["varlen_cls"].startswith("the task's files")


def test_ci_spot_checks_a_few_holding_golds_rotating_with_the_commit(monkeypatch) -> None:
    """Holding records cost CI a few golds, not the task set's: the same commit picks the same
    tasks, other commits others, and over commits every task is picked; GPU2TPU_CI_GOLDS=all
    grades every gold."""
    from gpu2tpu.harness import ci_selection

    tasks = [f"owner__task{i}" for i in range(60)]
    first = ci_selection.spot_checks(tasks, "a" * 40)
    assert len(first) == ci_selection.SPOT_CHECKS and first == ci_selection.spot_checks(tasks, "a" * 40)
    seen: set[str] = set()
    for n in range(200):
        seen |= set(ci_selection.spot_checks(tasks, f"{n:040x}"))
    assert seen == set(tasks)
    assert ci_selection.spot_checks(tasks, "b" * 40) != first
    assert len(ci_selection.commit_key()) == 40  # this checkout's HEAD
    monkeypatch.setattr(ci_selection, "validated", type("V", (), {"changed": staticmethod(lambda s: None)}))
    monkeypatch.setattr(ci_selection, "find_task", lambda t: t)
    gold_only, whole, lapsed = ci_selection.ci_plan(tasks, key="c" * 40)
    assert len(gold_only) == ci_selection.SPOT_CHECKS and not whole and not lapsed
    monkeypatch.setenv(ci_selection.ALL_GOLDS_ENV, "all")
    assert ci_selection.ci_plan(tasks, key="c" * 40)[0] == set(tasks)
