"""Real runs from `gpu2tpu evaluate` through the real harness regrader into a real store.

Uses the `real_run_dir` fixture (tests/leaderboard/conftest.py): a run directory written by
`gpu2tpu evaluate` on the practice tasks. No monkeypatching here: the regrade is the harness's own.
The expected numbers are read from the untampered report.json files, then checked three ways:
stored rows, the agents view, and after tampering.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import pytest

from gpu2tpu.leaderboard.ingest import VERIFIED, submit
from gpu2tpu.leaderboard.queries import run_view
from gpu2tpu.leaderboard.runfiles import SubmissionRefused, find_reports
from gpu2tpu.leaderboard.schema import open_read_only


def reports(run_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in find_reports(run_dir)]


def metadata_for(tmp_path: Path, agent: str, model: str | None) -> Path:
    path = tmp_path / f"{agent}.yaml"
    path.write_text(f"agent: {agent}\nmodel: {model or 'none'}\norganisation: gpu2tpu tests\n")
    return path


def test_real_run_ingests_and_tables_match_reports(real_run_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "real.duckdb"
    by_agent: dict[str, list[dict]] = defaultdict(list)
    for report in reports(real_run_dir):
        by_agent[report["agent"]].append(report)
    assert by_agent, "the real run has no reports"
    for agent, rows in by_agent.items():  # the test ran it: the maintainers' own (verified) run
        meta = metadata_for(tmp_path, agent, rows[0].get("model"))
        result = submit(real_run_dir, meta, db, trust=VERIFIED)
        assert result.inserted == len(rows)
        assert result.verdict_changed == 0  # untampered: the regrade agrees with evaluate
    con = open_read_only(db)
    stored = {
        (r[0], r[1], r[2]): r[3:]
        for r in con.execute(
            "SELECT agent, task_id, attempt, migrated, category, silent FROM evaluations"
        ).fetchall()
    }
    for agent, rows in by_agent.items():
        for r in rows:
            key = (agent, r["task_id"], int(r.get("attempt") or 1))
            v = r["verdict"]
            assert stored[key] == (v["migrated"], v["category"], v["silent"])
    agents = {row["agent"]: row for row in run_view(con, "agents").records()}
    for agent, rows in by_agent.items():
        scored = [r for r in rows if r["verdict"]["category"] != "infra"]
        if scored:
            expected = sum(r["verdict"]["migrated"] for r in scored) / len(scored)
            assert agents[agent]["migrated_rate"] == pytest.approx(expected, abs=1e-4)
    decided = Counter(
        r["verdict"]["category"] for rows in by_agent.values() for r in rows if not r["verdict"]["migrated"]
    )
    failures = {row["category"]: row["decided"] for row in run_view(con, "failures").records()}
    assert {k: v for k, v in failures.items() if v} == dict(decided)
    # each evidence line keeps where it came from; this harness's runs lack no evidence file
    sources = {r[0] for r in con.execute("SELECT DISTINCT source FROM evidence").fetchall()}
    assert {"in-process", "supervisor", "static-scan"} <= sources
    assert con.execute("SELECT DISTINCT evidence_absent FROM evaluations").fetchall() == [([],)]
    con.close()


def test_forged_verdict_in_real_run_is_rescored(real_run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(real_run_dir, run)
    failing = [(p, json.loads(p.read_text())) for p in find_reports(run)]
    failing = [(p, r) for p, r in failing if not r["verdict"]["migrated"]]
    if not failing:
        pytest.skip("the real run has no failing evaluation to forge")
    path, report = failing[0]
    truth = dict(report["verdict"])
    report["verdict"] = {
        **truth,
        "migrated": True,
        "silent": False,
        "category": None,
        "categories": [],
    }
    path.write_text(json.dumps(report))
    db = tmp_path / "forged.duckdb"
    submit(real_run_dir, metadata_for(tmp_path, "gold", None), db, trust=VERIFIED)  # publishes refs
    result = submit(run, metadata_for(tmp_path, report["agent"], report.get("model")), db)
    assert result.verdict_changed >= 1
    con = duckdb.connect(str(db), read_only=True)
    row = con.execute(
        "SELECT migrated, category, verdict_changed FROM evaluations WHERE task_id = $t "
        "AND attempt = $a AND agent = $g",
        {"t": report["task_id"], "a": int(report.get("attempt") or 1), "g": report["agent"]},
    ).fetchall()[0]
    assert row == (False, truth["category"], True)
    con.close()


def test_tampered_real_trace_is_refused(real_run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(real_run_dir, run)
    path = next(p for p in find_reports(run) if (p.parent / "trace.jsonl").exists())
    report = json.loads(path.read_text())
    trace = path.parent / "trace.jsonl"
    lines = trace.read_text().splitlines()
    lines[-1] = lines[-1].replace('"exit_code": 1', '"exit_code": 0') + " "
    trace.write_text("\n".join(lines) + "\n")
    db = tmp_path / "tampered.duckdb"
    with pytest.raises(SubmissionRefused, match="sha256"):
        submit(run, metadata_for(tmp_path, report["agent"], report.get("model")), db)
    assert not db.exists()
