"""Schema versions and migrations, store location, and the checked-in price table."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard import prices, schema
from gpu2tpu.leaderboard.queries import run_view
from gpu2tpu.leaderboard.schema import (
    CURRENT_VERSION,
    StoreError,
    default_db_path,
    migrate,
    open_read_only,
    open_writable,
)

V1_EVALUATION = """INSERT INTO evaluations (evaluation_id, submission_id, run_id, agent, model,
    task_id, attempt, prediction_hash, report_path, harness_version, corpus_revision, runs,
    numerics, hardware, goal, performance, migrated, silent, category, categories,
    verdict_changed) VALUES ($id, 's1', 'r1', 'old-agent', 'm', 't1', 1, 'p', 'x/report.json',
    '0.1.0', 'unbuilt', true, true, $hw, true, true, $hw, false, $cat, $cats, $changed)"""


def make_v1_store(path: Path) -> None:
    con = duckdb.connect(str(path))
    assert migrate(con, target=1) == [1]
    con.execute(
        "INSERT INTO submissions VALUES ('s1', 'r1', 'old-agent', 'm', 'Org', now(), NULL, "
        "'0.1.0', 'unbuilt', 'h', 2, 1, '{}', NULL)"
    )
    con.execute(V1_EVALUATION, {"id": "e1", "hw": True, "cat": None, "cats": [], "changed": False})
    con.execute(
        V1_EVALUATION,
        {"id": "e2", "hw": False, "cat": "wrong_device", "cats": ["wrong_device"], "changed": True},
    )
    con.close()


def test_fresh_store_records_every_migration(tmp_path: Path) -> None:
    con = open_writable(tmp_path / "new.duckdb")
    rows = con.execute("SELECT version, description FROM schema_version ORDER BY 1").fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5] and CURRENT_VERSION == 5
    assert migrate(con) == []  # idempotent
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"submissions", "evaluations", "evidence", "tasks", "prices", "schema_version"} <= tables
    con.close()


def test_upgrading_a_v1_file(tmp_path: Path, capsys) -> None:
    db = tmp_path / "v1.duckdb"
    make_v1_store(db)
    with pytest.raises(StoreError, match="schema v1.*leaderboard migrate"):
        open_read_only(db)  # readers never migrate
    assert main(["leaderboard", "migrate", "--db", str(db)]) == 0
    assert "applied migrations [2, 3, 4, 5]" in capsys.readouterr().out
    con = open_read_only(db)
    assert schema.schema_version(con) == 5
    rows = con.execute("SELECT evaluation_id, migrated, verdict_diff FROM evaluations ORDER BY 1").fetchall()
    assert rows == [("e1", True, []), ("e2", False, None)]  # unknown diff stays NULL
    applied = con.execute("SELECT version, applied_at FROM schema_version ORDER BY 1").fetchall()
    assert [v for v, _ in applied] == [1, 2, 3, 4, 5] and applied[1][1].tzinfo is not None
    # v1 rows were graded from the submitters' own files: v4 marks them self-reported, keys the
    # rollups by trust, and the agents view lists them unranked
    assert con.execute("SELECT DISTINCT trust FROM evaluations").fetchall() == [("self-reported",)]
    assert con.execute("SELECT trust, agent, evaluations FROM agent_task_stats").fetchall() == [
        ("self-reported", "old-agent", 2)]
    agents = run_view(con, "agents").records()
    assert [(r["agent"], r["trust"], r["rank"]) for r in agents] == [("old-agent", "self-reported", None)]
    assert run_view(con, "failures").rows == []  # aggregate views count verified results
    # v5: which evidence files a run lacked, and each line's source, were not stored: unknown
    assert con.execute("SELECT DISTINCT evidence_absent FROM evaluations").fetchall() == [(None,)]
    con.close()


def test_v3_backfills_rollups_from_v1_rows(tmp_path: Path) -> None:
    db = tmp_path / "v1.duckdb"
    make_v1_store(db)
    con = duckdb.connect(str(db))
    schema.migrate(con, target=3)
    assert con.execute(
        "SELECT agent, task_id, evaluations, migrated, stop_hardware FROM agent_task_stats"
    ).fetchall() == [("old-agent", "t1", 2, 1, 1)]
    assert con.execute("SELECT category, decided, silent FROM agent_category_stats").fetchall() == [
        ("wrong_device", 1, 0)
    ]
    con.close()


def test_a_failed_migration_rolls_back(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "v1.duckdb"
    make_v1_store(db)
    broken = schema.Migration(
        2, "broken", ("ALTER TABLE evaluations ADD COLUMN z INT", "SELECT * FROM no_such_table")
    )
    monkeypatch.setattr(schema, "MIGRATIONS", (schema.MIGRATIONS[0], broken))
    con = duckdb.connect(str(db))
    with pytest.raises(duckdb.Error):
        migrate(con)
    assert schema.schema_version(con) == 1
    cols = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'evaluations'"
        ).fetchall()
    ]
    assert "z" not in cols
    con.close()


def test_newer_store_is_refused(tmp_path: Path) -> None:
    con = open_writable(tmp_path / "future.duckdb")
    con.execute("INSERT INTO schema_version (version, description) VALUES (99, 'future')")
    with pytest.raises(StoreError, match="newer than this gpu2tpu"):
        migrate(con)
    con.close()


def test_default_location(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPU2TPU_DB", str(tmp_path / "env.duckdb"))
    assert default_db_path() == tmp_path / "env.duckdb"
    monkeypatch.delenv("GPU2TPU_DB")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_db_path() == tmp_path / ".cache" / "gpu2tpu" / "leaderboard.duckdb"


def test_price_table_is_sourced_and_complete() -> None:
    table = prices.load_prices()
    latest = prices.latest_version(table)
    names = {p.accelerator for p in table if p.price_version == latest}
    assert {"tpu-v5e", "tpu-v5p", "tpu-v6e", "gpu-a100", "gpu-h100"} <= names
    for p in table:
        assert p.source_url.startswith("https://") and p.retrieved_on.year >= 2024
        assert p.usd_per_chip_hour >= 0 and p.pricing
    assert prices.lookup("Trillium", table).accelerator == "tpu-v6e"
    assert prices.lookup("TPU v5 lite", table).usd_per_chip_hour == 1.20
    with pytest.raises(prices.UnknownPrice, match="no price for execution target 'tpu-v9'"):
        prices.lookup("tpu-v9", table)


def test_every_target_prices() -> None:
    """Every target resolves to a price: the emulated one by its own row, a TPU target by the
    generation its host reports (node.json); a TPU run with no TPU generation is refused."""
    from gpu2tpu.harness.node_facts import tpu_generation
    from gpu2tpu.record.targets import TARGETS

    table = prices.load_prices()
    for name, target in TARGETS.items():
        host = "cpu" if target.emulated else tpu_generation("v6e-8")
        price = prices.lookup_run(name, host, table)
        assert price.usd_per_chip_hour == (0.0 if target.emulated else 2.70), name
        if not target.emulated:
            for reported in (None, "cpu"):  # never a silent zero from the CPU row
                with pytest.raises(prices.UnknownPrice, match="priced by the accelerator"):
                    prices.lookup_run(name, reported, table)
    assert prices.lookup_run("tpu", tpu_generation("v5litepod-16"), table).accelerator == "tpu-v5e"


def test_prices_sync_is_versioned(tmp_path: Path) -> None:
    con = open_writable(tmp_path / "p.duckdb")
    table = prices.load_prices()
    prices.sync_prices(con, table)
    prices.sync_prices(con, table)  # same version again: nothing new
    newer = [prices.Price(**{**p.__dict__, "price_version": "2027-01-01"}) for p in table[:2]]
    prices.sync_prices(con, newer)
    assert con.execute("SELECT count(*) FROM prices").fetchall()[0][0] == len(table) + 2
    con.close()
