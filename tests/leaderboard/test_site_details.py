"""The drill-down's compact files (details/strings.js, details/a<N>.js, leaderboard/site_details.py)
show a reader exactly what the store holds: every evidence line of every run, the figures with
the digits the page printed before they were rounded, and hostile text as inert text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import lb_runfactory as rf
import pytest
from lb_browser import open_page
from test_site_browser import site  # noqa: F401  (the fixture)

from gpu2tpu.leaderboard import ingest
from gpu2tpu.leaderboard.ingest import submit
from gpu2tpu.leaderboard.site import build_site
from gpu2tpu.leaderboard.site_details import shown, split_digits

# what the page printed before (raw figures, site.js usd() and num()), for each fact line
OLD_FACTS_JS = """([agentUsd, execUsd, chipS, stepS, refS]) => {
  const usd = (v) => (v == null ? "–" : v === 0 ? "$0" : "$" + (v < 1 ? v.toFixed(4) : v.toFixed(2)));
  const num = (v, d) => (v == null ? "–" : Number(v).toFixed(d));
  return [usd(agentUsd), usd(execUsd), num(chipS, 1),
          stepS == null ? "–" : `${num(stepS * 1000, 1)} ms (reference ${
            refS == null ? "–" : num(refS * 1000, 1) + " ms"})`];
}"""
HOSTILE_LINES = [
    "exit status 1: </script><script>window.pwned=1</script> at step 0042",
    "<!--<script> 3 <img src=x onerror=window.pwned=2> & \u2028 line 7",
    "</SCRIPT 12><svg onload=window.pwned=3>",
]


def shown_lines(page: Any, eid: str) -> list[str]:
    page.click(f"#evals tr[data-eval='{eid[:16]}']")
    return page.locator("#eval-detail .crit li").all_text_contents()


def test_split_digits_keeps_every_character() -> None:
    for text in ["step 0 measured 0.0705 in [1.2, 1.25]", "007 and 12345678901234567890 and 9",
                 "", "no digits", "2.355987071990967 vs 2.35599 (rtol 0.01)", "x1y22z333"]:
        pieces, values = split_digits(text)
        assert len(pieces) == len(values) + 1
        rebuilt = pieces[0] + "".join(str(v) + p for v, p in zip(values, pieces[1:], strict=True))
        assert rebuilt == text
    assert split_digits("a 0705 b 17 c 0")[1] == ["0705", 17, 0]  # a leading zero stays text
    assert split_digits("9" * 16)[1] == ["9" * 16]  # past a JavaScript number's exact digits


def test_rounded_figures_print_as_before_in_chromium(browser: Any) -> None:  # noqa: F811
    values = [0.03125, 0.125, 1.005, 0.99996, 0.99995, 2.675, -0.00001, 1234.56785, 0.5, 1e-7,
              12345678.125, 0.1 + 0.2, 462.52230282640505, 0.0056017417940723985 * 1000, 3.0]
    page = browser.new_page()
    for decimals in ("usd", 1, 2, 4):
        fmt = ("(v) => (v < 1 ? v.toFixed(4) : v.toFixed(2))" if decimals == "usd"
               else f"(v) => v.toFixed({decimals})")
        before = page.evaluate(f"(vs) => vs.map({fmt})", values)
        after = page.evaluate(f"(vs) => vs.map({fmt})", [shown(v, decimals) for v in values])
        assert after == before, decimals
    assert len(json.dumps(shown(462.52230282640505, 1))) < len(json.dumps(462.52230282640505))
    page.close()


@pytest.mark.usefixtures("fake_regrader", "corpus_tasks")
def test_every_run_of_an_agent_shows_its_stored_evidence_and_facts(
        browser: Any, site: tuple[Path, Path]) -> None:  # noqa: F811
    out, db = site
    con = duckdb.connect(str(db), read_only=True)
    runs = con.execute(
        "SELECT evaluation_id, agent_cost_usd, execution_cost_usd, chip_seconds, step_time_s, "
        "reference_step_time_s FROM evaluations WHERE agent = 'agent-a' ORDER BY task_id").fetchall()
    evidence = {eid: con.execute(
        "SELECT text, source FROM evidence WHERE evaluation_id = $e ORDER BY criterion, seq",
        {"e": eid}).fetchall() for eid, *_ in runs}
    con.close()
    assert len(runs) == 5 and sum(len(v) for v in evidence.values()) > 20
    page = open_page(browser, out)
    page.click("#ranking tr[data-agent='agent-a']")
    page.wait_for_selector("#evals tbody tr")
    assert page.locator("#evals tbody tr").count() == len(runs)
    for eid, *figures in runs:
        lines = evidence[eid]
        expected = [f"{s} {t.removeprefix(f'source: {s}: ')}" if s else t for t, s in lines]
        assert sorted(shown_lines(page, eid)) == sorted(expected), eid
        facts = page.locator("#eval-detail dl.facts").inner_text()
        agent_usd, exec_usd, chip_s, step = page.evaluate(OLD_FACTS_JS, figures)
        assert f"Agent cost\n{agent_usd}" in facts
        assert f"Execution cost\n{exec_usd}" in facts and f"({chip_s} chip-seconds" in facts
        assert f"Step time\n{step}" in facts
    assert page.errors == []
    shared = (out / "details" / "strings.js").read_text()
    assert shared.startswith("LB_STRINGS(1,[") and "source: in-process" not in shared  # cut to a label


@pytest.fixture
def hostile_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in regrader with markup, digits inside it and a line separator in evidence lines."""
    def regrade(report_path: Path, verified: object = None) -> dict:
        graded = rf.fake_regrade(report_path, verified)
        graded["verdict"]["criteria"]["runs"]["evidence"] += [
            {"ok": False, "category": "crash", "text": t} for t in HOSTILE_LINES]
        return graded

    monkeypatch.setattr(ingest, "regrade_graded", regrade)
    monkeypatch.setattr(ingest.submit, "__kwdefaults__", {"trust": ingest.VERIFIED})


@pytest.mark.usefixtures("hostile_evidence", "corpus_tasks")
def test_hostile_evidence_stays_text_in_the_details_files(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    db = tmp_path / "lb.duckdb"
    submit(rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp", exit_code=1)], run_id="run-a"),
           rf.write_metadata(tmp_path / "m.yaml"), db)
    con = duckdb.connect(str(db), read_only=True)
    eid = con.execute("SELECT evaluation_id FROM evaluations").fetchall()[0][0]
    stored = [r[0] for r in con.execute("SELECT text FROM evidence WHERE text LIKE '%pwned%' "
                                        "ORDER BY seq").fetchall()]
    build_site(con, tmp_path / "site")
    con.close()
    assert len(stored) == len(HOSTILE_LINES)
    files = {p.name: p.read_text() for p in (tmp_path / "site" / "details").iterdir()}
    assert sorted(files) == ["a0.js", "strings.js"] and "pwned" in files["a0.js"]
    for name, text in files.items():
        assert not any(c in text for c in "<>&\u2028\u2029"), name  # nothing can end the script
    page = open_page(browser, tmp_path / "site")
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.click("#ranking tr[data-agent='agent-a']")
    page.wait_for_selector("#evals tbody tr")
    lines = shown_lines(page, eid)
    for text in stored:  # shown as the store holds it, character for character
        assert text in lines, (text, lines)
    assert any("</script><script>" in line for line in lines)
    assert page.evaluate("window.pwned") is None and dialogs == [] and page.errors == []
    assert page.locator("#eval-detail img, #eval-detail svg, #eval-detail script").count() == 0
    assert page.locator("script").count() == 4  # data, page script, strings.js, a0.js
