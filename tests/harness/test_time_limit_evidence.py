"""A run's time limit is evidence (process.json `time_limit`): `evaluate --timeout N`, then
`report`, then `submit` name a run stopped at N alike (`timeout`: the caller's cap), where `report`
and `submit` used to recompute the limit from the task and call it `slow`."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from gpu2tpu.cli import main
from gpu2tpu.harness.cli import DEMO_TASK
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.materialise import migration_patch

pytestmark = pytest.mark.slow


def test_a_run_stopped_at_the_callers_timeout_is_timeout_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = find_task(DEMO_TASK)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"schema_version": 1, "task_id": DEMO_TASK, "agent": "gold",
                                 "patch": migration_patch(spec, "gold"), "claimed_success": True}) + "\n")
    runs = tmp_path / "runs"
    main(["evaluate", "--predictions", str(preds), "--run-id", "cut", "--runs", str(runs),
          "--timeout", "3"])
    eval_dir = runs / "cut" / "gold" / DEMO_TASK
    process = json.loads((eval_dir / "process.json").read_text())
    assert process["timed_out"] and process["time_limit"] == {"time_s": 3.0, "from": "--timeout"}
    evaluated = json.loads((eval_dir / "report.json").read_text())["verdict"]["category"]
    capsys.readouterr()
    assert main(["report", str(runs / "cut"), "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)[0]["verdict"]["category"]
    meta = tmp_path / "meta.yaml"
    meta.write_text("agent: gold\nmodel: none\norganisation: tests\n")
    db = tmp_path / "lb.duckdb"
    assert main(["submit", str(runs / "cut"), "--metadata", str(meta), "--db", str(db)]) == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        submitted = con.execute("SELECT category FROM evaluations").fetchall()[0][0]
    finally:
        con.close()
    assert evaluated == reported == submitted == "timeout"
