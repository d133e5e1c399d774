"""Every gold migration is graded migrated and every broken one exactly as labelled, for real."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from gpu2tpu.harness.cli import DEMO_BROKEN, DEMO_TASK
from gpu2tpu.harness.validate import WHOLE_SUITES_ENV, expected, graded, labelled_migrations, plan
from gpu2tpu.judge.regrade import IntegrityError, regrade_report
from gpu2tpu.tasks import TASKS_DIR
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.finder import list_tasks as all_tasks
from gpu2tpu.tasks.spec import VALIDATED_FILE, read_label


def list_tasks() -> list[str]:
    """The practice tasks (upstream tasks are graded in test_upstream_tasks.py)."""
    return all_tasks(kind="practice")


def _reports(run: Path) -> list[dict]:
    summary = json.loads((run / "summary.json").read_text())
    return [json.loads((run / rel).read_text()) for rel in summary["evaluations"]]


def test_suite_shape() -> None:
    tasks = list_tasks()
    assert len(tasks) >= 3
    broken = [p for t in tasks for p in (TASKS_DIR / t / "migrations" / "broken").glob("*.patch")]
    assert len(broken) >= 8
    categories = {read_label(p).category for p in broken}
    for needed in ("wrong_device", "recompilation", "host_sync", "cpu_fallback", "config_drift",
                   "chips_unused", "workload_changed", "patch_rejected", "crash", "tampered"):
        assert needed in categories, f"no broken migration labelled {needed}"
    for t in tasks:  # correct migrations written differently from the gold: no false fails
        assert len(list((TASKS_DIR / t / "migrations" / "alternatives").glob("*.patch"))) >= 2, t


def test_every_verdict_as_labelled(practice_run: Path) -> None:
    """Every migration the session graded (conftest.py `practice_predictions`) as labelled: every
    gold, the demo's broken ones, whole suites of tasks whose validated.json no longer holds."""
    reports = _reports(practice_run)
    graded_now = {(r["task_id"], r["agent"]) for r in reports}
    _, whole = plan(list_tasks(), changed_only=not os.environ.get(WHOLE_SUITES_ENV))
    labels = {(m.task_id, m.agent): m for t in list_tasks() for m in labelled_migrations(find_task(t))}
    assert graded_now == {k for k in labels if k[1] == "gold" or k[0] in whole} | \
        {(DEMO_TASK, f"broken-{name}") for name in DEMO_BROKEN}
    mismatches = []
    for r in reports:
        m, v = labels[(r["task_id"], r["agent"])], r["verdict"]
        got, want = graded(v), expected(m.category, m.failing, m.silent)
        if got != want:
            bad = [e["text"] for c in v["criteria"].values() for e in c["evidence"] if not e["ok"]]
            mismatches.append(f"{r['agent']}/{r['task_id']}: got {got}, want {want}; {bad}")
        assert v["migrated"] == (r["agent"] == "gold" or r["agent"].startswith("alt-"))
    assert not mismatches, "\n".join(mismatches)


def test_practice_tasks_hold_validation_records() -> None:
    """CI grades a practice task's whole suite only when its record no longer holds: each practice
    task carries one (written by `gpu2tpu validate --tasks ID`), so a missing one is a slow CI."""
    for task_id in list_tasks():
        assert (TASKS_DIR / task_id / VALIDATED_FILE).is_file(), \
            f"{task_id}: run `gpu2tpu validate --tasks {task_id}` and commit its {VALIDATED_FILE}"


def test_reports_carry_provenance(practice_run: Path) -> None:
    for r in _reports(practice_run):
        assert r["schema_version"] == 1 and r["harness_version"] and r["corpus_revision"]
        assert len(r["task_hash"]) == 64 and r["runtime"]["torch_xla"] == "2.9.0"
        assert r["files"]["process.json"] and any(k.startswith("references/") for k in r["files"])


def test_regrade_reproduces_verdicts(practice_run: Path) -> None:
    for r in _reports(practice_run):
        path = practice_run / r["agent"] / r["task_id"] / "report.json"
        assert regrade_report(path) == r["verdict"]


def test_tampered_verdict_is_regraded_to_truth(practice_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "practice"
    shutil.copytree(practice_run, run)
    path = run / "broken-stays_on_cpu" / "cifar_amp" / "report.json"
    report = json.loads(path.read_text())
    report["verdict"]["migrated"] = True
    report["verdict"]["category"] = None
    path.write_text(json.dumps(report))
    truth = regrade_report(path)
    assert not truth["migrated"] and truth["category"] == "wrong_device"


def test_tampered_trace_is_refused(practice_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "practice"
    shutil.copytree(practice_run, run)
    trace = run / "broken-stays_on_cpu" / "cifar_amp" / "trace.jsonl"
    trace.write_text(trace.read_text().replace('"cpu"', '"xla:0"'))
    with pytest.raises(IntegrityError, match="trace.jsonl"):
        regrade_report(trace.parent / "report.json")


def test_validate_regrade_grades_saved_runs_against_the_labels(
        practice_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`validate --regrade` runs nothing: the saved labelled runs, graded again, against their
    labels; an evaluation whose evidence was altered is skipped, saying why."""
    from gpu2tpu.cli import main

    run = tmp_path / "practice"
    shutil.copytree(practice_run, run)
    trace = run / "broken-stays_on_cpu" / "cifar_amp" / "trace.jsonl"
    trace.write_text(trace.read_text() + "\n")
    assert main(["validate", "--regrade", str(run)]) == 0
    out = capsys.readouterr().out
    n = len(_reports(practice_run)) - 1  # every practice evaluation is a labelled migration
    assert f"{n} of {n} saved migrations regraded as labelled (1 skipped)" in out
    assert "skipped broken-stays_on_cpu/cifar_amp/report.json" in out and "trace.jsonl" in out
    # the validity report: each signal's value/limit for the farthest correct and nearest broken
    report = out.split("validity report:", 1)[1]
    assert "\n## cifar_amp\n" in report
    assert re.search(r"^curve .*  correct: gold", report, re.MULTILINE), report


def test_report_cli_matches(practice_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpu2tpu.cli import main

    assert main(["report", str(practice_run), "--json"]) == 0
    regraded = {(r["agent"], r["task_id"]): r["verdict"] for r in json.loads(capsys.readouterr().out)}
    for r in _reports(practice_run):
        assert regraded[(r["agent"], r["task_id"])] == r["verdict"]


def test_changed_prediction_is_not_served_from_cache(practice_run: Path, tmp_path: Path) -> None:
    """Re-evaluating a different patch under the same run id must grade the new patch."""
    from gpu2tpu.harness.evaluate import evaluate_predictions

    run_root = tmp_path / "runs"
    shutil.copytree(practice_run, run_root / "practice")
    mig = TASKS_DIR / "cifar_amp" / "migrations"
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"schema_version": 1, "task_id": "cifar_amp", "agent": "gold",
                                 "patch": (mig / "broken" / "protected_edit.patch").read_text()}) + "\n")
    evaluate_predictions(preds, "practice", run_root)
    report = json.loads((run_root / "practice" / "gold" / "cifar_amp" / "report.json").read_text())
    assert report["verdict"]["category"] == "patch_rejected"


def test_migrated_directory_prediction(practice_run: Path, tmp_path: Path) -> None:
    """A prediction may be a migrated directory instead of a patch; protected edits are refused."""
    import subprocess

    from gpu2tpu.harness.evaluate import evaluate_predictions

    task = TASKS_DIR / "ddp_mlp"
    good, bad = tmp_path / "good", tmp_path / "bad"
    for target in (good, bad):
        shutil.copytree(task / "project", target)
    subprocess.run(["git", "apply", str(task / "migrations" / "gold.patch")], cwd=good, check=True)
    (bad / "data.py").write_text((bad / "data.py").read_text().replace("DATA_SEED = 777", "DATA_SEED = 1"))
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"schema_version": 1, "task_id": "ddp_mlp", "agent": name,
                                         "migrated_dir": name}) + "\n" for name in ("good", "bad")))
    run_root = tmp_path / "runs"
    shutil.copytree(practice_run / "references", run_root / "dirs" / "references")
    evaluate_predictions(preds, "dirs", run_root)
    good_report = json.loads((run_root / "dirs" / "good" / "ddp_mlp" / "report.json").read_text())
    assert good_report["verdict"]["migrated"], good_report["verdict"]
    assert "xs.mark_sharding" in (run_root / "dirs" / "good" / "ddp_mlp" / "patch.diff").read_text()
    bad_report = json.loads((run_root / "dirs" / "bad" / "ddp_mlp" / "report.json").read_text())
    assert bad_report["verdict"]["category"] == "patch_rejected"
    assert "data.py" in bad_report["verdict"]["criteria"]["runs"]["evidence"][0]["text"]
