"""harness/progress.py: the `[k/N] ...; elapsed, about M min left` of long commands, on a fake
clock; and that `tasks fetch`, `evaluate` and `validate` print it per finished item."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpu2tpu.cli import main
from gpu2tpu.harness.progress import Progress, duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_estimate_is_the_pace_so_far_times_the_items_left() -> None:
    clock = Clock()
    progress = Progress(10, clock)
    assert progress.left() is None and progress.line("a") == "[0/10] a; 0 s elapsed"  # no pace yet
    clock.now += 120
    progress.done()
    progress.done()  # two items in 2 min: one a minute, 8 left
    assert progress.left() == pytest.approx(480)
    assert progress.line("task_b: as labelled") == \
        "[2/10] task_b: as labelled; 2 min elapsed, about 8 min left"
    clock.now += 180
    progress.done(5)  # done(k) sets the count (several workers finish out of order)
    assert progress.line() == "[5/10] 5 min elapsed, about 5 min left"


def test_last_item_has_no_estimate_and_start_resets() -> None:
    clock = Clock()
    progress = Progress(2, clock)
    clock.now += 30
    progress.done(2)
    assert progress.line("x") == "[2/2] x; 30 s elapsed"
    clock.now += 500
    progress.start()  # e.g. after the reference builds: the items' own work starts now
    assert progress.finished == 0 and progress.elapsed() == 0
    clock.now += 10
    progress.done()
    assert progress.line() == "[1/2] 10 s elapsed, about 10 s left"


@pytest.mark.parametrize("seconds, text", [(0, "0 s"), (44.6, "45 s"), (59.6, "1 min"),
                                           (754, "13 min"), (3600, "1 h 00 min"), (7530, "2 h 06 min")])
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_tasks_fetch_prints_progress_per_source(capsys) -> None:
    """Practice tasks fetch nothing (no network): each line still counts and times."""
    assert main(["tasks", "fetch", "cifar_amp", "varlen_cls"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\[1/2\] cifar_amp: practice task, nothing to fetch; \d+ s elapsed, "
                        r"about \d+ s left", lines[0]), lines
    assert re.fullmatch(r"\[2/2\] varlen_cls: practice task, nothing to fetch; \d+ s elapsed", lines[1])


def test_evaluate_reports_progress_per_evaluation(tmp_path: Path, capsys, monkeypatch) -> None:
    """`evaluate` with the grading stubbed: one `[k/N] label: outcome; ... elapsed` line per
    evaluation on stderr, the estimate on all but the last."""
    from gpu2tpu.harness import evaluate as ev
    from gpu2tpu.record.report import Report

    monkeypatch.setattr(ev, "ensure_references", lambda spec, target, log: ("k", tmp_path / "ref"))
    monkeypatch.setattr(ev, "_copy_references", lambda layout, key, cached: (key, cached))
    monkeypatch.setattr(ev.sandboxed, "configure", lambda **kw: None)  # no global sandbox change
    monkeypatch.setattr(ev.sandboxed, "sandbox_mode", lambda: "none")

    def fake(spec, pred, layout, ref, target, timeout_s=None) -> Report:
        return Report(run_id=layout.run_id, task_id=pred.task_id, task_hash="", agent=pred.agent,
                      attempt=pred.attempt, prediction_hash="", target=target.name, created_at="",
                      verdict={"migrated": True, "category": None, "criteria": {}})

    monkeypatch.setattr(ev, "evaluate_or_infra", fake)
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(f'{{"schema_version": 1, "task_id": "cifar_amp", "agent": "a{i}", '
                             f'"patch": "x"}}\n' for i in range(3)))
    ev.evaluate_predictions(preds, "r", tmp_path / "runs")
    err = capsys.readouterr().err.splitlines()
    mine = [line for line in err if line.startswith("[")]
    assert len(mine) == 3, err
    assert re.fullmatch(r"\[1/3\] a\d/cifar_amp.*; \d+ s elapsed, about \d+ s left", mine[0]), mine
    assert re.fullmatch(r"\[3/3\] a\d/cifar_amp.*; \d+ s elapsed", mine[2]), mine


def test_validate_reports_progress_per_task(tmp_path: Path, capsys, monkeypatch) -> None:
    """`validate` with the grading stubbed: its per-task line is `[k/N] task: ...; elapsed`, with
    the estimate on all but the last task."""
    from gpu2tpu.harness import validate as va

    def fake(task_ids, runs, run_id, workers, target, gold_only, engine):
        item = va.Labelled(task_ids[0], "gold", "", va.MIGRATED, (), False)
        return [item], {(item.task_id, "gold"): {"migrated": True, "criteria": {}}}, {"evaluations": []}

    quiet = lambda *a, **k: None  # noqa: E731
    stubs = {"validate": fake, "refresh_summary": quiet, "tabulate": quiet, "_keep": lambda *a: {},
             "_build_ahead": quiet, "say_at_start": quiet}
    for name, stub in stubs.items():
        monkeypatch.setattr(va, name, stub)
    monkeypatch.setattr(va.sandboxed, "sandbox_mode", lambda: "none")
    assert main(["validate", "--tasks", "cifar_amp", "varlen_cls", "--rerun", "--no-record",
                 "--runs", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out.splitlines()
    mine = [line for line in out if line.startswith("[")]
    assert re.fullmatch(r"\[1/2\] cifar_amp: 1 migration\(s\) ran in \d+ s, as labelled; "
                        r"\d+ s elapsed, about \d+ s left", mine[0]), out
    assert re.fullmatch(r"\[2/2\] varlen_cls: .*, as labelled; \d+ s elapsed", mine[1]), out
