"""Leaderboard views, output formats, read-only SQL, export / --from / publish, and the site."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import lb_runfactory as rf
import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.export import ExportError, open_export, publish
from gpu2tpu.leaderboard.ingest import submit
from gpu2tpu.leaderboard.queries import run_view
from gpu2tpu.leaderboard.schema import open_read_only

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Two agents. agent-a: 1 of 4 migrated (+1 infra); agent-b: 2 of 3 migrated."""
    db = tmp_path / "lb.duckdb"
    run_a = rf.write_run(
        tmp_path / "a",
        [
            rf.Eval("cifar_amp", target="tpu-v5e", human_interventions=2),
            rf.Eval("mnist_mlp", backend="cpu", step_time_s=0.04),
            rf.Eval("gpt_tiny", exit_code=1, claimed_success=False),
            rf.Eval("resnet_ddp", loss0=3.0),
            rf.Eval("infra_t", infra=True),
        ],
    )
    submit(run_a, rf.write_metadata(tmp_path / "a.yaml"), db)
    run_b = rf.write_run(
        tmp_path / "b",
        [
            rf.Eval("cifar_amp", agent_cost_usd=1.0),
            rf.Eval("mnist_mlp", agent_cost_usd=1.0),
            rf.Eval("gpt_tiny", compiles=50, claimed_success=None, agent_cost_usd=1.0),
        ],
        agent="agent-b",
        model="model-y",
        run_id="run-b",
    )
    submit(run_b, rf.write_metadata(tmp_path / "b.yaml", agent="agent-b", model="model-y"), db)
    return db


def records(db: Path, view: str, **filters: Any) -> list[dict[str, Any]]:
    con = open_read_only(db)
    try:
        return run_view(con, view, **filters).records()
    finally:
        con.close()


def test_agents_view_numbers(store: Path) -> None:
    rows = {r["agent"]: r for r in records(store, "agents")}
    a, b = rows["agent-a"], rows["agent-b"]
    assert (b["rank"], a["rank"]) == (1, 2)
    assert a["tasks"] == 4 and a["evaluations"] == 4 and a["infra_excluded"] == 1
    assert a["migrated_rate"] == 0.25 and a["runs_rate"] == 0.75
    assert a["numerics_rate"] == 0.75 and a["hardware_rate"] == 0.75
    assert a["silent_share"] == pytest.approx(2 / 3, abs=1e-4)  # wrong_device, numerics; not crash
    assert a["overclaim"] == 0.5  # claimed 3 of 4, migrated 1 of 4
    assert a["mean_interventions"] == 0.5
    assert a["agent_usd_per_task"] == 0.5
    # costs are all money spent (the infra attempt too) per task attempted
    assert a["execution_usd_per_task"] == pytest.approx(36 / 3600 * 1.20 / 5, abs=1e-4)
    assert a["median_speed_ratio"] == 2.0  # ratios 2, 0.5, 2, 2
    assert b["migrated_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert b["performance_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert b["overclaim"] == 0.0  # the unclaimed evaluation is left out of the comparison
    assert records(store, "agents", agent="agent-b")[0]["agent"] == "agent-b"
    assert len(records(store, "agents", agent="agent-b")) == 1


def test_rollups_stay_exact_after_incremental_submits(store: Path, tmp_path: Path) -> None:
    from gpu2tpu.leaderboard.schema import ROLLUP_TABLES, rollup_select

    run = rf.write_run(
        tmp_path / "more",
        [rf.Eval("mnist_mlp", attempt=2), rf.Eval("new_task", backend="cpu")],
        run_id="more",
    )
    submit(run, rf.write_metadata(tmp_path / "more.yaml"), store)
    con = open_read_only(store)
    for table in ROLLUP_TABLES:
        stored = con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        full = con.execute(f"SELECT * FROM ({rollup_select(table)}) ORDER BY ALL").fetchall()
        assert stored == full and stored, table
    row = con.execute(
        "SELECT evaluations, migrated FROM agent_task_stats WHERE agent = 'agent-a' AND task_id = 'mnist_mlp'"
    ).fetchall()
    assert row == [(2, 1)]
    assert con.execute(
        "SELECT decided, occurred FROM agent_category_stats WHERE "
        "agent = 'agent-a' AND category = 'wrong_device'"
    ).fetchall() == [(2, 2)]
    con.close()


def test_ties_rank_by_total_cost(tmp_path: Path) -> None:
    db = tmp_path / "tie.duckdb"
    for agent, cost in (("pricey", 5.0), ("cheap", 1.0)):
        run = rf.write_run(
            tmp_path / agent, [rf.Eval("t1", agent_cost_usd=cost)], agent=agent, run_id=f"r-{agent}"
        )
        submit(run, rf.write_metadata(tmp_path / f"{agent}.yaml", agent=agent), db)
    assert [r["agent"] for r in records(db, "agents")] == ["cheap", "pricey"]


def test_unverified_runs_are_never_ranked(tmp_path: Path) -> None:
    """A run graded without evidence the grader could not collect (`unverified`) counts with the
    excluded, like infra: an agent's rate is over what was judged."""
    run = rf.write_run(tmp_path / "u", [rf.Eval("t1"), rf.Eval("t2", unverified=True)], agent="u",
                       run_id="r-u")
    db = tmp_path / "u.duckdb"
    submit(run, rf.write_metadata(tmp_path / "u.yaml", agent="u"), db)
    (row,) = records(db, "agents")
    assert row["evaluations"] == 1 and row["migrated_rate"] == 1.0 and row["infra_excluded"] == 1
    failures = {r["category"]: r for r in records(db, "failures")}
    assert failures["unverified"]["excluded_from_scores"] is True


def test_tasks_failures_costs_calibration(store: Path) -> None:
    tasks = {r["task_id"]: r for r in records(store, "tasks")}
    assert "infra_t" not in tasks
    assert tasks["cifar_amp"]["agents_migrated"] == 2 and tasks["cifar_amp"]["main_blocker"] is None
    assert tasks["mnist_mlp"]["agents"] == 2 and tasks["mnist_mlp"]["agents_migrated"] == 1
    assert tasks["mnist_mlp"]["main_blocker"] == "hardware"
    assert tasks["gpt_tiny"]["main_blocker"] == "runs"  # crash ranks before performance on ties
    assert [r["task_id"] for r in records(store, "tasks", task="gpt_tiny")] == ["gpt_tiny"]

    failures = {r["category"]: r for r in records(store, "failures")}
    assert set(failures) == {"crash", "wrong_device", "numerics_drift", "recompilation", "infra"}
    assert failures["crash"]["silent_share"] == 0 and failures["wrong_device"]["silent_share"] == 1
    assert failures["infra"]["excluded_from_scores"] is True
    assert sum(r["decided"] for r in failures.values()) == 5

    costs = records(store, "costs")
    by_agent = {r["agent"]: r for r in costs if r["level"] == "agent"}
    by_task = {r["task_id"]: r for r in costs if r["level"] == "task"}
    assert by_agent["agent-b"]["agent_usd"] == 3.0 and by_agent["agent-a"]["agent_usd"] == 2.5
    assert by_agent["agent-a"]["execution_usd"] == pytest.approx(0.012)
    assert by_agent["agent-b"]["agent_usd_per_migration"] == 1.5
    assert by_task["cifar_amp"]["agent_usd"] == 1.5 and by_task["cifar_amp"]["evaluations"] == 2

    calib = {r["agent"]: r for r in records(store, "calibration")}
    assert (calib["agent-a"]["overclaimed"], calib["agent-a"]["admitted_failure"]) == (2, 1)
    assert calib["agent-a"]["claim_precision"] == pytest.approx(1 / 3, abs=1e-4)
    assert calib["agent-b"]["no_claim"] == 1 and calib["agent-b"]["claimed_and_verified"] == 2


def test_formats(store: Path, capsys) -> None:
    base = ["leaderboard", "--db", str(store)]
    assert main(base + ["agents", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["agent"] for r in data] == ["agent-b", "agent-a"]
    assert main(base + ["--format", "csv"]) == 0  # bare `leaderboard` is the agents view
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert table[1]["migrated_rate"] == "0.25"
    assert main(["leaderboard", "failures", "--db", str(store), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| category | decided |") and "| infra |" in out
    assert main(["leaderboard", "tasks", "--db", str(store)]) == 0
    assert "main_blocker" in capsys.readouterr().out.splitlines()[0]


def test_sql_is_read_only(store: Path, capsys) -> None:
    q = "SELECT agent, count(*) AS n FROM evaluations GROUP BY agent ORDER BY agent"
    assert main(["leaderboard", "sql", q, "--db", str(store), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"agent": "agent-a", "n": 5},
        {"agent": "agent-b", "n": 3},
    ]
    for bad in ("DELETE FROM evaluations", f"COPY evaluations TO '{store.parent / 'x.csv'}'"):
        assert main(["leaderboard", "sql", bad, "--db", str(store)]) == 2
        assert "read-only" in capsys.readouterr().err
    assert not (store.parent / "x.csv").exists()
    assert len(records(store, "agents")) == 2


def test_missing_store_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["leaderboard", "--db", str(tmp_path / "none.duckdb")]) == 2
    assert "submit a run first" in capsys.readouterr().err


def test_export_and_read_back(store: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "export"
    assert main(["leaderboard", "export", "--to", str(out), "--db", str(store)]) == 0
    assert "evaluations 8" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema_version"] == 5 and manifest["harness_version"] == "0.1.0"
    assert manifest["corpus_revision"] and manifest["tables"]["evaluations"]["rows"] == 8
    assert manifest["tables"]["evidence"]["rows"] == 40
    assert manifest["price_versions"] == ["2026-12-02"]
    assert manifest["tables"]["prices"]["sha256"] == rf.sha(out / "tables/prices.parquet")
    assert (out / "views" / "agents.parquet").exists()
    assert "configs:" in (out / "README.md").read_text()
    for view in ("agents", "tasks", "failures", "costs", "calibration"):
        assert main(["leaderboard", view, "--db", str(store), "--format", "json"]) == 0
        from_db = capsys.readouterr().out
        assert main(["leaderboard", view, "--from", str(out), "--format", "json"]) == 0
        assert capsys.readouterr().out == from_db
    # the parquet files are real: DuckDB reads them directly too
    n = duckdb.connect().execute(
        "SELECT count(*) FROM read_parquet($p)", {"p": str(out / "tables/evaluations.parquet")}
    )
    assert n.fetchall()[0] == (8,)
    tampered = tmp_path / "tampered"
    shutil.copytree(out, tampered)
    shutil.copy(out / "tables/prices.parquet", tampered / "tables/evaluations.parquet")
    with pytest.raises(ExportError, match="does not match its manifest"):
        open_export(str(tampered))


class FakeHfApi:
    """Same interface as huggingface_hub.HfApi for what publish uses; the 'Hub' is a folder."""

    hub: Path

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def create_repo(self, repo_id: str, **kwargs: Any) -> str:
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        (self.hub / repo_id).mkdir(parents=True, exist_ok=True)
        return f"https://huggingface.co/datasets/{repo_id}"

    def upload_folder(self, **kwargs: Any) -> str:
        self.calls.append(("upload_folder", kwargs))
        shutil.copytree(kwargs["folder_path"], self.hub / kwargs["repo_id"], dirs_exist_ok=True)
        return "commit-1"


def test_publish_and_read_from_hf(store: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    FakeHfApi.hub = tmp_path / "hub"
    api = FakeHfApi()
    monkeypatch.setattr("huggingface_hub.HfApi", lambda: api)
    assert main(["leaderboard", "publish", "--repo-id", "org/gpu2tpu-lb", "--db", str(store)]) == 0
    assert "published" in capsys.readouterr().out
    assert [c[0] for c in api.calls] == ["create_repo", "upload_folder"]
    assert api.calls[0][1]["repo_type"] == "dataset" and api.calls[0][1]["exist_ok"] is True
    assert "evaluations 8" in api.calls[1][1]["commit_message"]
    assert (FakeHfApi.hub / "org/gpu2tpu-lb/manifest.json").exists()

    seen: dict[str, Any] = {}

    def fake_download(**kwargs: Any) -> str:  # huggingface_hub.snapshot_download's signature
        seen.update(kwargs)
        return str(FakeHfApi.hub / kwargs["repo_id"])

    con = open_export("hf://datasets/org/gpu2tpu-lb@main", download=fake_download)
    assert seen["repo_id"] == "org/gpu2tpu-lb" and seen["revision"] == "main"
    assert seen["repo_type"] == "dataset"
    assert run_view(con, "agents").records() == records(store, "agents")
    with pytest.raises(duckdb.Error):  # external access is off on --from connections
        con.execute(f"COPY evaluations TO '{tmp_path / 'leak.csv'}'")
    again = FakeHfApi()
    publish(tmp_path / "hub" / "org/gpu2tpu-lb", "org/copy", api=again)
    assert again.calls[1][1]["folder_path"].endswith("org/gpu2tpu-lb")


def test_site_is_self_contained(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert main(["leaderboard", "site", "--to", str(out), "--db", str(store)]) == 0
    page = (out / "index.html").read_text()
    assert page.startswith("<!doctype html>") and "agent-b" in page and "wrong_device" in page
    for external in ("<script src", "<link", "@import", "url(", "fetch("):
        assert external not in page  # data, script and styles are inline; details/ is local
    assert page.index('"agent":"agent-b"') < page.index('"agent":"agent-a"')  # ranked order
    assert sorted(p.name for p in (out / "details").iterdir()) == ["a0.js", "a1.js", "strings.js"]
    assert str(store) not in page and str(tmp_path) not in page  # no local paths
    assert (out / "agents.md").read_text().startswith("| rank |")
