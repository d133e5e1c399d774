"""The page and the views say what their trust filter hides: a store holding only self-reported
results (the README demo's) gives `(no rows)` in the views that count verified results, plus a
line saying how many results are hidden and how to see them; its page opens on every entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import lb_runfactory as rf
import pytest
from lb_browser import open_page

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.ingest import submit
from gpu2tpu.leaderboard.queries import hidden_note
from gpu2tpu.leaderboard.schema import open_read_only
from gpu2tpu.leaderboard.site import build_site

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")


@pytest.fixture
def self_reported_store(tmp_path: Path) -> Path:
    """Two agents, every result self-reported (relabelled in every table that has a trust)."""
    db = tmp_path / "lb.duckdb"
    for agent in ("agent-a", "agent-b"):
        run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp"), rf.Eval("mnist", backend="cpu")],
                           agent=agent, run_id=f"run-{agent}")
        submit(run, rf.write_metadata(tmp_path / f"{agent}.yaml", agent=agent), db)
    con = duckdb.connect(str(db))
    for (table,) in con.execute(
        "SELECT table_name FROM information_schema.columns WHERE column_name = 'trust'").fetchall():
        con.execute(f"UPDATE {table} SET trust = 'self-reported'")
    con.close()
    return db


def test_views_say_how_many_results_they_hide(self_reported_store: Path, capsys) -> None:
    db = str(self_reported_store)
    assert main(["leaderboard", "failures", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "(no rows)" in out
    assert "gpu2tpu: 4 self-reported results not counted here (showing verified only); pass " \
           "--trust all or --trust self-reported to include them" in err
    assert main(["leaderboard", "failures", "--db", db, "--agent", "agent-a", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "[]" and "2 self-reported results not counted" in err  # stdout stays JSON
    for argv in (["failures", "--trust", "all"], ["failures", "--trust", "self-reported"], ["agents"]):
        assert main(["leaderboard", *argv, "--db", db]) == 0
        out, err = capsys.readouterr()
        assert err == "" and "(no rows)" not in out, argv
    con = open_read_only(self_reported_store)
    assert hidden_note(con, "costs", trust="verified", task="no-such-task") is None
    con.close()


def test_a_page_without_verified_entries_opens_on_all_of_them(browser: Any,  # noqa: F811
                                                                self_reported_store: Path,
                                                                tmp_path: Path) -> None:
    """The README demo's page (issue 42): every entry shown at once, marked self-reported, with a
    line saying none is ranked; choosing verified then says what that hides."""
    con = open_read_only(self_reported_store)
    build_site(con, tmp_path / "site")
    con.close()
    page = open_page(browser, tmp_path / "site")
    assert page.locator("#trust").input_value() == "all"
    assert page.locator("#ranking tbody tr").count() == 2
    assert page.locator("#ranking .badge").all_inner_texts() == ["self-reported"] * 2
    assert page.locator("#count").inner_text() == "2 of 2 entries"
    assert page.locator("#trust-note").inner_text() == (
        "No verified results yet: all 2 entries are self-reported (graded by the submitter, not "
        "re-executed by the maintainers), so none is ranked.")
    assert page.locator("#hidden").inner_text() == ""
    page.select_option("#trust", "verified")
    assert page.locator("#ranking tbody tr").count() == 0
    assert page.locator("#hidden").inner_text() == (
        '2 self-reported entries hidden: choose Results "all" (or "self-reported") to see them')
    assert page.errors == []
