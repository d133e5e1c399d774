"""The leaderboard's columns and views derive from the harness's CRITERIA registry."""

from __future__ import annotations

from pathlib import Path

from gpu2tpu.judge.criteria import CRITERION_NAMES
from gpu2tpu.leaderboard.criteria_sql import expand_criteria
from gpu2tpu.leaderboard.queries import SQL_DIR, VIEWS, run_view
from gpu2tpu.leaderboard.schema import open_writable


def test_store_and_views_name_every_criterion(tmp_path: Path) -> None:
    con = open_writable(tmp_path / "lb.duckdb")
    try:
        columns = {r[0] for r in con.execute("DESCRIBE evaluations").fetchall()}
        assert set(CRITERION_NAMES) <= columns
        rollup = {r[0] for r in con.execute("DESCRIBE agent_task_stats").fetchall()}
        assert {f"stop_{c}" for c in CRITERION_NAMES} <= rollup
        agents = run_view(con, "agents")
        assert [f"{c}_rate" for c in CRITERION_NAMES] == [c for c in agents.columns if c.endswith("_rate")
                                                           and c != "migrated_rate"]
        for view in VIEWS:
            run_view(con, view)  # every view runs on the expanded SQL
    finally:
        con.close()


def test_a_new_criterion_needs_no_sql_edit() -> None:
    names = (*CRITERION_NAMES, "energy")
    agents = expand_criteria((SQL_DIR / "agents.sql").read_text(), names)
    tasks = expand_criteria((SQL_DIR / "tasks.sql").read_text(), names)
    assert "AS energy_rate" in agents and "s_energy" in tasks and "'energy'" in tasks
    assert "{criterion}" not in agents + tasks
    stop = [line for line in tasks.splitlines() if "AS s_" in line]
    assert stop[-1].rstrip().endswith("s_energy") and all(s.rstrip().endswith(",") for s in stop[:-1])
