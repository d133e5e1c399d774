"""Submission: checks, re-scoring, idempotency, atomicity (real DuckDB files throughout)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import lb_runfactory as rf
import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard import ingest, prices, references
from gpu2tpu.leaderboard.ingest import submit
from gpu2tpu.leaderboard.runfiles import SubmissionRefused

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")


def mixed_evals() -> list[rf.Eval]:
    return [
        rf.Eval("cifar_amp", target="tpu-v5e"),  # migrated
        rf.Eval("mnist_mlp", backend="cpu"),  # wrong_device, silent
        rf.Eval("gpt_tiny", exit_code=1, claimed_success=False),  # crash, not silent
        rf.Eval("resnet_ddp", loss0=3.0),  # numerics_drift, silent
    ]


def counts(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            for t in ("submissions", "evaluations", "evidence", "tasks", "prices")
        }
    finally:
        con.close()


def test_submit_cli_stores_regraded_rows(tmp_path: Path, capsys) -> None:
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    meta = rf.write_metadata(tmp_path / "meta.yaml")
    db = tmp_path / "lb.duckdb"
    assert main(["submit", str(run), "--metadata", str(meta), "--db", str(db)]) == 0
    assert "submitted 4 evaluations" in capsys.readouterr().out
    assert counts(db) == {
        "submissions": 1,
        "evaluations": 4,
        "evidence": 20,
        "tasks": 4,
        "prices": 6,
    }
    con = duckdb.connect(str(db), read_only=True)
    rows = dict(con.execute("SELECT task_id, category FROM evaluations").fetchall())
    assert rows == {
        "cifar_amp": None,
        "mnist_mlp": "wrong_device",
        "gpt_tiny": "crash",
        "resnet_ddp": "numerics_drift",
    }
    cost = con.execute(
        "SELECT execution_cost_usd, price_version FROM evaluations WHERE task_id='cifar_amp'"
    ).fetchall()[0]
    assert cost == (pytest.approx(36 / 3600 * 1.20), "2026-12-02")
    types = dict(
        con.execute(
            "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
            "WHERE column_name IN ('submitted_at', 'created_at', 'updated_at')"
        ).fetchall()
    )
    assert set(types.values()) == {"TIMESTAMP WITH TIME ZONE"}
    assert con.execute("SELECT task_id, title, source FROM tasks WHERE task_id = 'cifar_amp'").fetchall() == [
        ("cifar_amp", "CIFAR with fp16 AMP", "corpus")
    ]
    assert con.execute("SELECT source FROM tasks WHERE task_id = 'gpt_tiny'").fetchall() == [("report",)]
    meta_json = json.loads(con.execute("SELECT metadata FROM submissions").fetchall()[0][0])
    assert meta_json["organisation"] == "Test Lab" and meta_json["date"] == "2026-12-02"
    con.close()


def test_same_run_twice_is_a_no_op_and_new_attempt_is_a_new_row(tmp_path: Path) -> None:
    db = tmp_path / "lb.duckdb"
    meta = rf.write_metadata(tmp_path / "meta.yaml")
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    first = submit(run, meta, db)
    before = counts(db)
    again = submit(run, meta, db)
    assert first.inserted == 4 and again.submission_id is None and again.skipped == 4
    assert counts(db) == before
    run2 = rf.write_run(tmp_path / "runs2", [rf.Eval("cifar_amp", attempt=2)], run_id="run-2")
    second = submit(run2, meta, db)
    assert second.inserted == 1
    after = counts(db)
    assert after["submissions"] == 2 and after["evaluations"] == 5
    con = duckdb.connect(str(db), read_only=True)
    attempts = con.execute(
        "SELECT attempt FROM evaluations WHERE task_id='cifar_amp' ORDER BY attempt"
    ).fetchall()
    assert attempts == [(1,), (2,)]


def test_forged_verdict_is_rescored_to_the_truth(tmp_path: Path) -> None:
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    report_path = run / "agent-a" / "mnist_mlp" / "report.json"
    report = json.loads(report_path.read_text())
    report["verdict"].update(migrated=True, silent=False, category=None, categories=[])
    report["verdict"]["criteria"]["hardware"]["passed"] = True
    report_path.write_text(json.dumps(report))
    db = tmp_path / "lb.duckdb"
    result = submit(run, rf.write_metadata(tmp_path / "m.yaml"), db)
    assert result.verdict_changed == 1
    con = duckdb.connect(str(db), read_only=True)
    row = con.execute(
        "SELECT migrated, hardware, category, reported_migrated, verdict_changed, verdict_diff "
        "FROM evaluations WHERE task_id = 'mnist_mlp'"
    ).fetchall()[0]
    assert row[:5] == (False, False, "wrong_device", True, True)
    assert {"migrated", "category", "criteria.hardware.passed"} <= set(row[5])
    assert con.execute("SELECT n_verdict_changed FROM submissions").fetchall()[0] == (1,)
    assert con.execute("SELECT count(*) FROM evaluations WHERE verdict_changed").fetchall()[0] == (1,)


@pytest.mark.parametrize(
    "damage, message",
    [
        ("tamper_trace", "contents differ from the sha256 recorded"),
        ("delete_trace", "trace.jsonl: missing"),
        ("unlist_trace", "does not list trace.jsonl"),
        ("delete_reference", "references/ref-1/seed-0/trace.jsonl: missing"),
        ("unknown_harness", "unknown harness version '9.9.9'"),
        ("unknown_revision", "unknown corpus revision 'rev-nobody-knows'"),
        ("unknown_target", "no price for execution target 'gpu-b999'"),
        ("escape_path", "outside the run directory"),
        ("unsandboxed", "graded with sandbox none"),
    ],
)
def test_refusals_write_nothing(tmp_path: Path, damage: str, message: str) -> None:
    db = tmp_path / "lb.duckdb"
    meta = rf.write_metadata(tmp_path / "m.yaml")
    submit(rf.write_run(tmp_path / "old", [rf.Eval("seed_task")], run_id="old"), meta, db)
    before = counts(db)
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    eval_dir = run / "agent-a" / "gpt_tiny"
    report = json.loads((eval_dir / "report.json").read_text())
    if damage == "tamper_trace":
        with (eval_dir / "trace.jsonl").open("a") as fh:
            fh.write('{"event": "step", "step": 99}\n')
    elif damage == "delete_trace":
        (eval_dir / "trace.jsonl").unlink()
    elif damage == "unlist_trace":
        del report["files"]["trace.jsonl"]
    elif damage == "delete_reference":
        (run / "references" / "ref-1" / "seed-0" / "trace.jsonl").unlink()
    elif damage == "unknown_harness":
        report["harness_version"] = "9.9.9"
    elif damage == "unknown_revision":
        report["corpus_revision"] = "rev-nobody-knows"
    elif damage == "unknown_target":
        report["execution"]["target"] = "gpu-b999"
    elif damage == "escape_path":
        report["files"]["../../../etc/hostname"] = "0" * 64
    elif damage == "unsandboxed":  # graded with --unsafe-no-sandbox
        report["runtime"]["sandbox"] = "none"
    (eval_dir / "report.json").write_text(json.dumps(report))
    with pytest.raises(SubmissionRefused, match=message.replace("(", r"\(").replace(".", r"\.")):
        submit(run, meta, db)
    assert counts(db) == before


def test_a_rejected_patch_needs_no_trace(tmp_path: Path) -> None:
    run = rf.write_run(tmp_path / "runs", [rf.Eval("t1", patch_rejected=True, chip_seconds=0)])
    assert not (run / "agent-a" / "t1" / "trace.jsonl").exists()
    db = tmp_path / "lb.duckdb"
    assert submit(run, rf.write_metadata(tmp_path / "m.yaml"), db).inserted == 1
    con = duckdb.connect(str(db), read_only=True)
    row = con.execute("SELECT category, silent, execution_cost_usd FROM evaluations").fetchall()
    assert row == [("patch_rejected", False, 0.0)]
    assert con.execute("SELECT DISTINCT ok FROM evidence").fetchall() == [(False,)]
    con.close()
    # the same missing trace without process.json's word for it is refused
    report_path = run / "agent-a" / "t1" / "report.json"
    report = json.loads(report_path.read_text())
    (run / "agent-a" / "t1" / "process.json").write_text('{"patch_rejected": false}')
    report["files"]["process.json"] = rf.sha(run / "agent-a" / "t1" / "process.json")
    report_path.write_text(json.dumps(report))
    with pytest.raises(SubmissionRefused, match="does not list trace.jsonl"):
        submit(run, rf.write_metadata(tmp_path / "m.yaml"), tmp_path / "other.duckdb")


def _drop(run: Path, eval_name: str, *names: str) -> None:
    """Take files out of an evaluation's report.json list (left on disk, as a careless forger would)."""
    path = run / "agent-a" / eval_name / "report.json"
    report = json.loads(path.read_text())
    for name in names:
        del report["files"][name]
    path.write_text(json.dumps(report))


@pytest.mark.parametrize(
    "dropped",
    [("scan.json",), ("kernel.json",), ("references/ref-1/gold/kernel.json",),
     ("references/ref-1/seed-0/kernel.json",)],
)
@pytest.mark.parametrize("trust", [ingest.VERIFIED, ingest.SELF_REPORTED])
def test_a_run_that_drops_an_evidence_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dropped: tuple[str, ...], trust: str
) -> None:
    """A harness that writes scan.json and kernel views (this one, or any whose run lists one)
    wrote them for every evaluation: a report without one is refused, naming evaluation and file."""
    monkeypatch.setattr(references, "required_files", lambda task_id: set())  # made-up tasks
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    _drop(run, "gpt_tiny", *dropped)
    db = tmp_path / "lb.duckdb"
    message = f"evaluation agent-a/gpt_tiny does not list {dropped[0]}"
    with pytest.raises(SubmissionRefused, match=message.replace(".", r"\.")):
        submit(run, rf.write_metadata(tmp_path / "m.yaml"), db, trust=trust)
    assert not db.exists()


def test_older_runs_are_accepted_self_reported_and_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs recorded before the harness kept scans (or kernel views) are stored with what they
    lack (`evidence_absent`); the maintainers' own runs are always this harness's, so never."""
    monkeypatch.setattr(references, "required_files", lambda task_id: set())  # made-up tasks
    meta = rf.write_metadata(tmp_path / "m.yaml")
    db = tmp_path / "lb.duckdb"
    for run_id, evidence in (("before-scan", ()), ("before-kernel", ("scan.json",)),
                             ("current", rf.EVIDENCE)):
        # a rejected patch leaves neither scan nor kernel view: its references' kernel views say
        rejected = [rf.Eval("t2", patch_rejected=True, chip_seconds=0)] if "kernel.json" in evidence else []
        run = rf.write_run(tmp_path / "runs", [rf.Eval("t1"), *rejected], run_id=run_id, evidence=evidence)
        assert submit(run, meta, db, trust=ingest.SELF_REPORTED).inserted == 1 + len(rejected)
    con = duckdb.connect(str(db), read_only=True)
    marked = con.execute(
        "SELECT DISTINCT run_id, evidence_absent FROM evaluations ORDER BY run_id").fetchall()
    con.close()
    assert marked == [("before-kernel", ["kernel.json"]), ("before-scan", ["scan.json", "kernel.json"]),
                      ("current", [])]
    old = rf.write_run(tmp_path / "verified", [rf.Eval("t1")], run_id="old-verified", evidence=())
    with pytest.raises(SubmissionRefused, match="a verified run is evaluated by this harness"):
        submit(old, meta, tmp_path / "other.duckdb", trust=ingest.VERIFIED)
    # a scan-era run that drops its scan as well is still refused: the scan it lists nowhere else
    # is not inferred, but a kernel view listed anywhere is
    run = rf.write_run(tmp_path / "runs2", [rf.Eval("t1")], run_id="kernel-era")
    _drop(run, "t1", "scan.json")
    with pytest.raises(SubmissionRefused, match=r"does not list scan\.json: the harness that graded it"):
        submit(run, meta, tmp_path / "third.duckdb", trust=ingest.SELF_REPORTED)


def test_each_evidence_line_keeps_its_source(tmp_path: Path) -> None:
    """in-process, supervisor or static-scan, as the regraded verdict says; none where the line
    has none."""
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    db = tmp_path / "lb.duckdb"
    submit(run, rf.write_metadata(tmp_path / "m.yaml"), db)
    graded = rf.fake_regrade(run / "agent-a" / "cifar_amp" / "report.json")["verdict"]
    expected = {c: graded["criteria"][c]["evidence"][0].get("source") for c in rf.CRITERIA}
    assert expected["hardware"] == "supervisor" and expected["goal"] is None
    con = duckdb.connect(str(db), read_only=True)
    stored = dict(con.execute(
        "SELECT criterion, source FROM evidence JOIN evaluations USING (evaluation_id) "
        "WHERE task_id = 'cifar_amp'").fetchall())
    con.close()
    assert stored == expected


def test_cli_refusal_is_a_user_error(tmp_path: Path, capsys) -> None:
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    meta = tmp_path / "m.yaml"
    meta.write_text("agent: agent-a\nmodel: model-x\n")
    db = tmp_path / "lb.duckdb"
    assert main(["submit", str(run), "--metadata", str(meta), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "nothing written" in err and "organisation" in err
    assert not db.exists()


def test_metadata_must_match_the_reports(tmp_path: Path) -> None:
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    with pytest.raises(SubmissionRefused, match="no report .* is by agent 'other'"):
        submit(run, rf.write_metadata(tmp_path / "a.yaml", agent="other"), tmp_path / "x.db")
    with pytest.raises(SubmissionRefused, match="model 'model-x'"):
        submit(run, rf.write_metadata(tmp_path / "b.yaml", model="model-y"), tmp_path / "x.db")


def test_listed_corpus_revision_is_known(tmp_path: Path, monkeypatch) -> None:
    known = tmp_path / "known.txt"
    known.write_text("# released\nrev-2026-11\n")
    monkeypatch.setattr(prices, "KNOWN_REVISIONS", known)
    run = rf.write_run(tmp_path / "runs", [rf.Eval("t")], corpus_revision="rev-2026-11")
    assert submit(run, rf.write_metadata(tmp_path / "m.yaml"), tmp_path / "lb.db").inserted == 1


def test_crash_inside_the_transaction_leaves_the_store_as_it_was(tmp_path, monkeypatch) -> None:
    db = tmp_path / "lb.duckdb"
    meta = rf.write_metadata(tmp_path / "m.yaml")
    submit(rf.write_run(tmp_path / "old", [rf.Eval("seed_task")], run_id="old"), meta, db)
    before = counts(db)

    def explode(con, rows):  # evaluations and the submission are already inserted by now
        now = con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0]
        assert now > before["evaluations"]
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ingest, "_insert_evidence", explode)
    with pytest.raises(RuntimeError, match="disk on fire"):
        submit(rf.write_run(tmp_path / "runs", mixed_evals()), meta, db)
    assert counts(db) == before


KILL_SCRIPT = """
import sys, time, pathlib
sys.path.insert(0, sys.argv[4])
import lb_runfactory as rf
from gpu2tpu.leaderboard import ingest
ingest.regrade_graded = rf.fake_regrade
real = ingest._insert_evidence
def stall(con, rows):
    real(con, rows)
    pathlib.Path(sys.argv[5]).write_text("inside")
    time.sleep(120)
ingest._insert_evidence = stall
ingest.submit(*(pathlib.Path(a) for a in sys.argv[1:4]), trust="verified")
"""


def test_kill_mid_ingest_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "lb.duckdb"
    meta = rf.write_metadata(tmp_path / "m.yaml")
    submit(rf.write_run(tmp_path / "old", [rf.Eval("seed_task")], run_id="old"), meta, db)
    before = counts(db)
    run = rf.write_run(tmp_path / "runs", mixed_evals())
    flag = tmp_path / "flag"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            KILL_SCRIPT,
            str(run),
            str(meta),
            str(db),
            str(Path(__file__).parent),
            str(flag),
        ],
        env={**os.environ},
    )
    try:
        deadline = time.time() + 60
        while not flag.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert flag.exists(), "child never reached the middle of the transaction"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert counts(db) == before
    assert submit(run, meta, db).inserted == 4  # and the store still works afterwards
