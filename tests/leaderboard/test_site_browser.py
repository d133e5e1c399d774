"""The public page in a real headless Chromium (the distribution's, driven by Playwright): load it
from file://, sort, filter, open a drill-down, and compare what it shows with the store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import duckdb
import lb_runfactory as rf
import pytest
from lb_browser import open_page

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.ingest import SELF_REPORTED, submit
from gpu2tpu.leaderboard.queries import run_view
from gpu2tpu.leaderboard.schema import open_read_only

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Verified agent-a (1 of 4 migrated, +1 infra) and agent-b (2 of 3), self-reported agent-c;
    the site is written from a relative --to path holding a space."""
    db = tmp_path / "lb.duckdb"
    evals_a = [rf.Eval("cifar_amp"), rf.Eval("mnist_mlp", backend="cpu"),
               rf.Eval("gpt_tiny", exit_code=1, claimed_success=False), rf.Eval("resnet_ddp", loss0=3.0),
               rf.Eval("infra_t", infra=True)]
    run_a = rf.write_run(tmp_path / "runs", evals_a, run_id="run-a")
    submit(run_a, rf.write_metadata(tmp_path / "a.yaml"), db)
    evals_b = [rf.Eval("cifar_amp", agent_cost_usd=1.0), rf.Eval("mnist_mlp", agent_cost_usd=1.0),
               rf.Eval("gpt_tiny", compiles=50, agent_cost_usd=1.0)]
    submit(rf.write_run(tmp_path / "runs", evals_b, agent="agent-b", model="model-y", run_id="run-b"),
           rf.write_metadata(tmp_path / "b.yaml", agent="agent-b", model="model-y"), db)
    run_c = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp"), rf.Eval("mnist_mlp")],
                         agent="agent-c", model="model-z", run_id="run-c")
    submit(run_c, rf.write_metadata(tmp_path / "c.yaml", agent="agent-c", model="model-z"), db,
           trust=SELF_REPORTED)
    monkeypatch.chdir(tmp_path)
    assert main(["leaderboard", "site", "--to", "my site", "--db", str(db), "--runs", "runs"]) == 0
    return tmp_path / "my site", db


def column(page: Any, key: str) -> list[str]:
    return page.locator(f"#ranking tbody td[data-key='{key}']").all_inner_texts()


def test_ranking_matches_the_store_and_sorts_and_filters(browser: Any, site: tuple[Path, Path]) -> None:
    out, db = site
    con = open_read_only(db)
    ranked = [r for r in run_view(con, "agents").records() if r["trust"] == "verified"]
    con.close()
    assert [r["rank"] for r in ranked] == [1, 2]
    page = open_page(browser, out)
    assert column(page, "agent") == [r["agent"] for r in ranked]  # verified only, store's order
    rates = [f"{100 * r['migrated_rate']:.1f}%" for r in ranked]
    assert column(page, "migrated_rate") == rates
    assert "migrated_rate" not in page.locator("#ranking thead").inner_text()  # readable headers
    page.click("#ranking th[data-key='agent']")
    assert column(page, "agent") == sorted(r["agent"] for r in ranked)
    page.click("#ranking th[data-key='agent']")
    assert column(page, "agent") == sorted((r["agent"] for r in ranked), reverse=True)
    page.select_option("#trust", "all")
    assert set(column(page, "agent")) == {"agent-a", "agent-b", "agent-c"}
    assert page.locator("tr[data-agent='agent-c'] .badge").inner_text() == "self-reported"
    page.fill("#q", "model-y")
    assert column(page, "agent") == ["agent-b"]
    assert page.errors == []


def test_drill_down_shows_the_stored_evidence(browser: Any, site: tuple[Path, Path]) -> None:
    out, db = site
    con = duckdb.connect(str(db), read_only=True)
    eid, migrated, category = con.execute(
        "SELECT evaluation_id, migrated, category FROM evaluations WHERE agent = 'agent-a' "
        "AND task_id = 'gpt_tiny'").fetchall()[0]
    lines = con.execute(
        "SELECT text, source FROM evidence WHERE evaluation_id = $e ORDER BY criterion, seq", {"e": eid}
    ).fetchall()
    con.close()
    assert {s for _, s in lines} == {"in-process", "supervisor", None}
    # each line's source as a label before its text (a text that names it already says it once)
    evidence = [f"{s} {t.removeprefix(f'source: {s}: ')}" if s else t for t, s in lines]
    page = open_page(browser, out)
    page.click("#ranking tr[data-agent='agent-a']")
    page.wait_for_selector("#evals tbody tr")
    page.click(f"#evals tr[data-eval='{eid[:16]}']")
    detail = page.locator("#eval-detail")
    assert detail.locator(".crit").count() == 5
    shown = detail.locator(".crit li").all_inner_texts()
    assert sorted(shown) == sorted(evidence)
    assert detail.locator(".crit .src").count() == sum(1 for _, s in lines if s)
    text = detail.inner_text()
    assert not migrated and category in text and "Claimed by the agent\nfailure" in text
    assert "Evidence files\nevery one this harness keeps" in text
    link = detail.locator("a", has_text="trace")
    assert (out / link.get_attribute("href")).is_file()
    assert page.errors == []


def test_plots_and_provenance_without_local_paths(browser: Any, site: tuple[Path, Path]) -> None:
    out, db = site
    page = open_page(browser, out)
    assert page.locator("#scatter-svg circle.point").count() == 3
    assert page.locator("#failures-svg rect").count() >= 3
    assert page.locator("#grid-canvas").count() == 1
    assert "xla-cpu" in page.locator("#prices").inner_text()
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js", ".md"):
            text = path.read_text()
            assert str(out.parent) not in text and str(db) not in text, path
    shot = Path(os.environ.get("GPU2TPU_SCREENSHOT") or out.parent / "page.png")
    page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a rendered page, not blank
