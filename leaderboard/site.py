"""A static leaderboard page: one self-contained index.html (inline CSS, no scripts, no fetches)."""

from __future__ import annotations

import datetime as dt
import html
from pathlib import Path

import duckdb

from gpu2tpu.leaderboard.queries import VIEWS, Result, render, run_view

_TITLES = {
    "agents": "Agents",
    "tasks": "Tasks",
    "failures": "Failure taxonomy",
    "costs": "Costs",
    "calibration": "Claimed vs verified",
}
_NOTES = {
    "agents": "Ranked by migrated rate (all five criteria pass), ties by total cost. Rates are "
    "over task attempts, re-scored from traces; infra failures are excluded and counted.",
    "tasks": "How many agents migrated each task and which criterion stops most of the rest.",
    "failures": "First failing evidence decides the category; silent = the process exited 0.",
    "costs": "Agent cost is model API spend; execution cost is chip-hours x the price table.",
    "calibration": "Agents' own claim of success against the verified verdict.",
}
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:90rem;
padding:0 1rem;color:#1d1d1f;background:#fff}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;font-size:1.2rem}
p.meta,p.note{color:#555;margin:.3rem 0}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;margin-top:.5rem}
th,td{border-bottom:1px solid #e3e3e3;padding:.3rem .5rem;text-align:left;white-space:nowrap}
th{background:#f5f5f7;position:sticky;top:0}tr:hover td{background:#fafafa}
td.num{text-align:right}nav a{margin-right:1rem}
"""


def build_site(con: duckdb.DuckDBPyConnection, to_dir: Path, source: str) -> Path:
    """Write `to_dir/index.html` (and the views as markdown next to it); return the page path."""
    from gpu2tpu import __version__

    to_dir.mkdir(parents=True, exist_ok=True)
    meta = con.execute(
        "SELECT (SELECT max(version) FROM schema_version), "
        "(SELECT string_agg(DISTINCT corpus_revision, ', ') FROM submissions), "
        "(SELECT string_agg(DISTINCT harness_version, ', ') FROM submissions), "
        "(SELECT max(price_version) FROM prices), (SELECT count(*) FROM submissions), "
        "(SELECT count(*) FROM evaluations)"
    ).fetchall()[0]
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    sections = []
    for view in VIEWS:
        result = run_view(con, view)
        (to_dir / f"{view}.md").write_text(render(result, "markdown"))
        sections.append(
            f'<section id="{view}"><h2>{_TITLES[view]}</h2>'
            f'<p class="note">{html.escape(_NOTES[view])}</p>{_table(result)}</section>'
        )
    nav = " ".join(f'<a href="#{v}">{_TITLES[v]}</a>' for v in VIEWS)
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>gpu2tpu leaderboard</title><style>{_CSS}</style></head><body>"
        "<h1>gpu2tpu leaderboard</h1>"
        '<p class="meta">Coding agents migrating PyTorch research projects from NVIDIA GPUs to '
        "TPUs, graded by five criteria re-computed from saved traces.</p>"
        f'<p class="meta">schema v{_e(meta[0])} &middot; harness {_e(meta[2])} &middot; corpus '
        f"{_e(meta[1])} &middot; prices {_e(meta[3])} &middot; {_e(meta[4])} submissions, "
        f"{_e(meta[5])} evaluations &middot; generated {stamp} by gpu2tpu {__version__} from "
        f"{_e(source)}</p><nav>{nav}</nav>{''.join(sections)}</body></html>\n"
    )
    path = to_dir / "index.html"
    path.write_text(page)
    return path


def _table(result: Result) -> str:
    if not result.rows:
        return "<p>No rows yet.</p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in result.columns)
    body = []
    for row in result.rows:
        cells = []
        for value in row:
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            cls = ' class="num"' if numeric else ""
            cells.append(f"<td{cls}>{_e(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _e(value: object) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        return f"{value:g}"
    return html.escape(str(value))
