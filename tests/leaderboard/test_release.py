"""Issue 44: the first leaderboard release, `leaderboard/release/` (an export of the store after
`gpu2tpu leaderboard verify` re-executed the baseline bundle: noop, naive and gold over every task),
loads offline with `--from`, ranks the three verified over every task, and its page renders in
Chromium with naive's failure categories in the failure plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lb_browser import open_page

import gpu2tpu.leaderboard
from gpu2tpu.cli import main
from gpu2tpu.leaderboard.export import open_export
from gpu2tpu.leaderboard.queries import run_view

RELEASE = Path(gpu2tpu.leaderboard.__file__).parent / "release"
BASELINES = ("baseline-gold", "baseline-naive", "baseline-noop")


def _agents() -> list[dict[str, Any]]:
    con = open_export(str(RELEASE))
    try:
        return run_view(con, "agents", trust="verified").records()
    finally:
        con.close()


def test_the_release_ranks_the_three_baselines_over_every_task() -> None:
    con = open_export(str(RELEASE))
    try:
        tasks = {r[0] for r in con.execute("SELECT DISTINCT task_id FROM evaluations").fetchall()}
        per_agent = dict(con.execute("SELECT agent, count(DISTINCT task_id) FROM evaluations "
                                     "WHERE trust = 'verified' GROUP BY agent").fetchall())
        failures = run_view(con, "failures", agent="baseline-naive").records()
    finally:
        con.close()
    assert len(tasks) >= 35
    assert per_agent == dict.fromkeys(BASELINES, len(tasks))  # each over every task, verified
    ranked = sorted(_agents(), key=lambda r: r["rank"])
    assert [r["agent"] for r in ranked][0] == "baseline-gold"  # the ceiling ranks first
    assert {r["agent"] for r in ranked} == set(BASELINES)
    by = {r["agent"]: r for r in ranked}
    assert by["baseline-gold"]["migrated_rate"] > by["baseline-naive"]["migrated_rate"] \
        >= by["baseline-noop"]["migrated_rate"]
    assert len({f["category"] for f in failures if f["decided"]}) >= 4  # a careless port fails in many ways


def test_the_release_page_ranks_them_and_plots_naives_failures(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert main(["leaderboard", "site", "--to", str(out), "--from", str(RELEASE)]) == 0
    page = open_page(browser, out)
    ranked = sorted(_agents(), key=lambda r: r["rank"])
    shown = page.locator("#ranking tbody td[data-key='agent']").all_inner_texts()
    assert shown == [r["agent"] for r in ranked]
    tips = page.locator("#failures-svg rect title").all_text_contents()
    naive = {t.split(": ", 1)[1].rsplit(" ", 1)[0] for t in tips if t.startswith("baseline-naive:")}
    con = open_export(str(RELEASE))
    try:
        stored = {r["category"] for r in run_view(con, "failures", agent="baseline-naive").records()
                  if r["decided"]}
    finally:
        con.close()
    assert naive and naive <= stored | {"migrated"}, (naive, stored)
    assert page.errors == []
