"""The public leaderboard page: one static folder, no server, no network at view time.

`index.html` carries the ranking, plots and provenance as JSON in the page itself, with the
script and styles inline (data/site.js, data/site.css); the evidence behind every evaluation is in
`details/a<N>.js`, one file per agent, and `details/strings.js`, the evidence text agents share,
loaded when a reader opens an agent (<script> tags, so it works from file:// as well as from a
Hugging Face static Space); site_details.py says how they are kept small. No local path is written.

Every value goes into the page through safetext: JSON with `<`, `>`, `&`, U+2028/9 escaped
(json_for_html), the graded code's text (evidence lines, crash messages) through public_text, and
the copied report, trace and trajectory with every string cleaned the same way.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import duckdb

from gpu2tpu.judge.criteria import CATEGORIES, CRITERIA
from gpu2tpu.leaderboard.outdir import write_whole
from gpu2tpu.leaderboard.queries import VIEWS, render, run_view
from gpu2tpu.leaderboard.safetext import FILE_TEXT_LIMIT, json_for_html, public_json, public_text
from gpu2tpu.leaderboard.site_details import write_details

ASSETS = Path(__file__).parent / "data"
_PALETTE = ("#b71c1c", "#e65100", "#fbc02d", "#6a1b9a", "#00acc1", "#ec407a", "#3949ab", "#7cb342",
            "#455a64", "#8d6e63", "#ff8a65", "#1565c0", "#00897b", "#b0bec5", "#c0ca33", "#5d4037")
GRID_KEYS = ("", "migrated", "partly migrated", *CATEGORIES)  # '0' + index per agents x tasks cell

SITE_FILES = ("index.html", "README.md", "details", "files", *(f"{v}.md" for v in VIEWS))


def build_site(con: duckdb.DuckDBPyConnection, to_dir: Path, runs_root: Path | None = None) -> Path:
    """Write the page to `to_dir` (index.html, details/, views as markdown); return index.html.
    With `runs_root` (the directory holding runs/<run_id>), each evaluation's report.json and
    trace are copied under files/ and linked from its drill-down. The folder is written beside
    `to_dir` and renamed into place: a failure leaves the earlier page (or none), never part of one."""
    to_dir = Path(to_dir).expanduser()
    write_whole(to_dir, SITE_FILES, lambda stage: _write_site(con, stage, runs_root))
    return to_dir / "index.html"


def _write_site(con: duckdb.DuckDBPyConnection, to_dir: Path, runs_root: Path | None) -> None:
    data = page_data(con)
    details = to_dir / "details"
    details.mkdir()
    index = {(a["agent"], a["model"], a["trust"]): a["i"] for a in data["agents"]}
    write_details(details, {index[key]: evals for key, evals in
                            _evaluations(con, to_dir, runs_root).items() if key in index})
    for view in VIEWS:
        (to_dir / f"{view}.md").write_text(render(run_view(con, view), "markdown"))
    parts = {"CSS": (ASSETS / "site.css").read_text(), "DATA": json_for_html(data),
             "JS": (ASSETS / "site.js").read_text()}
    # one pass over the template: text inside the data is never taken for a placeholder
    page = re.sub(r"/\*(CSS|DATA|JS)\*/", lambda m: parts[m.group(1)],
                  (ASSETS / "site.html").read_text())
    (to_dir / "index.html").write_text(page)
    (to_dir / "README.md").write_text(  # a Hugging Face static Space serves the folder as is
        "---\ntitle: gpu2tpu leaderboard\nemoji: 📈\nsdk: static\napp_file: index.html\n"
        "pinned: false\n---\n\nThe gpu2tpu leaderboard: open index.html (no server needed).\n"
    )


def page_data(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Everything index.html shows, as JSON-ready values."""
    agents: list[dict[str, Any]] = []
    for row in run_view(con, "agents", trust="all").records():  # verified ranked, then the rest
        total = (row.get("agent_usd_per_task") or 0) + (row.get("execution_usd_per_task") or 0)
        agents.append({**row, "usd_per_task": total})
    keep = ("rank", "agent", "model", "trust", "tasks", "evaluations", "migrated_rate",
            *(f"{c.name}_rate" for c in CRITERIA), "silent_share", "overclaim", "usd_per_task",
            "median_speed_ratio")
    agents = [{"i": i, **{k: _plain(a.get(k)) for k in keep}} for i, a in enumerate(agents)]
    index = {(a["agent"], a["model"], a["trust"]): a["i"] for a in agents}
    failures: dict[int, dict[str, int]] = defaultdict(dict)
    for agent, model, trust, category, n in con.execute(
        "SELECT agent, model, trust, category, count(*) FROM evaluations WHERE NOT migrated "
        "GROUP BY ALL"
    ).fetchall():
        key = (_name(agent), _name(model), trust)  # the names as the page shows them
        if key in index:
            failures[index[key]][category or "failed"] = n
    tasks, grid = _grid(con, index)
    categories = [c for c in CATEGORIES if any(c in f for f in failures.values())]
    return {
        "meta": _meta(con),
        "criteria": [{"name": c.name, "title": c.title} for c in CRITERIA],
        "categories": categories,
        "colors": {k: _PALETTE[i % len(_PALETTE)] for i, k in enumerate(CATEGORIES)}
        | {"migrated": "#1e8e3e", "partly migrated": "#81c995", "failed": "#5f6368"},
        "agents": agents,
        "failures": failures,
        "tasks": tasks,
        "grid_keys": list(GRID_KEYS),
        "grid": grid,
    }


def _grid(con: duckdb.DuckDBPyConnection, index: dict[tuple, int]) -> tuple[list[str], dict[int, str]]:
    """Agents x tasks: one character per cell, '0' + index into GRID_KEYS."""
    tasks = [r[0] for r in con.execute("SELECT DISTINCT task_id FROM evaluations ORDER BY 1").fetchall()]
    column = {t: i for i, t in enumerate(tasks)}
    cells: dict[int, list[str]] = {}
    for agent, model, trust, task, n, ok, cats in con.execute(
        "SELECT agent, model, trust, task_id, count(*), count(*) FILTER (WHERE migrated), "
        "list(category) FILTER (WHERE NOT migrated) FROM evaluations GROUP BY ALL"
    ).fetchall():
        i = index.get((_name(agent), _name(model), trust))
        if i is None:
            continue
        if ok == n:
            key = "migrated"
        elif ok:
            key = "partly migrated"
        else:
            key = Counter(c for c in cats if c).most_common(1)[0][0] if any(cats) else "crash"
        row = cells.setdefault(i, ["0"] * len(tasks))
        row[column[task]] = chr(48 + GRID_KEYS.index(key if key in GRID_KEYS else "crash"))
    return [_name(t) for t in tasks], {i: "".join(r) for i, r in cells.items()}


def _meta(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    one = con.execute(
        "SELECT (SELECT max(version) FROM schema_version), count(*), "
        "count(*) FILTER (WHERE trust = 'verified'), count(*) FILTER (WHERE trust <> 'verified') "
        "FROM evaluations"
    ).fetchall()[0]
    versions = {
        col: [r[0] for r in con.execute(
            f"SELECT DISTINCT {col} FROM submissions WHERE {col} IS NOT NULL ORDER BY 1").fetchall()]
        for col in ("harness_version", "corpus_revision")
    }
    price_rows = con.execute(
        "SELECT price_version, accelerator, usd_per_chip_hour, source_url, retrieved_on::VARCHAR "
        "FROM prices ORDER BY price_version, accelerator"
    ).fetchall()
    return {
        "schema": one[0], "evaluations": one[1], "verified": one[2], "self_reported": one[3],
        "harness": versions["harness_version"], "corpus": versions["corpus_revision"],
        "prices": [dict(zip(("price_version", "accelerator", "usd_per_chip_hour", "source_url",
                             "retrieved_on"), r, strict=True)) for r in price_rows],
        "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _evaluations(con: duckdb.DuckDBPyConnection, to_dir: Path, runs_root: Path | None
                 ) -> dict[tuple, list[dict[str, Any]]]:
    crit_index = {c.name: i for i, c in enumerate(CRITERIA)}
    evidence: dict[str, list[list[Any]]] = defaultdict(list)
    for eid, crit, ok, text, source in con.execute(
        "SELECT evaluation_id, criterion, ok, text, source FROM evidence ORDER BY evaluation_id, "
        "criterion, seq"
    ).fetchall():  # source: in-process, supervisor, static-scan (None: not said or not stored)
        evidence[eid].append([crit_index.get(crit, -1), ok, public_text(text or ""),
                              _name(source)])
    cols = ["evaluation_id", "agent", "model", "trust", "task_id", "attempt", "migrated", "category",
            "silent", "claimed_success", "reported_migrated", "verdict_changed", "agent_cost_usd",
            "execution_cost_usd", "chip_seconds", "price_version", "step_time_s",
            "reference_step_time_s", "compile_count", "goal_metric", "goal_value", "run_id",
            "reference_status", "evidence_absent",
            "report_path", *(c.name for c in CRITERIA)]
    out: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in con.execute(
        f"SELECT {', '.join(cols)} FROM evaluations ORDER BY task_id, attempt"
    ).fetchall():
        e = dict(zip(cols, r, strict=True))
        eid = e["evaluation_id"]
        out[(_name(e["agent"]), _name(e["model"]), e["trust"])].append({
            "id": eid[:16], "task": _name(e["task_id"]), "attempt": e["attempt"],
            "trust": e["trust"], "migrated": e["migrated"], "category": _name(e["category"]),
            "silent": e["silent"],
            "claimed": e["claimed_success"], "reported_migrated": e["reported_migrated"],
            "verdict_changed": e["verdict_changed"], "agent_usd": e["agent_cost_usd"],
            "exec_usd": e["execution_cost_usd"], "chip_s": e["chip_seconds"],
            "price_version": e["price_version"], "step_ms": _ms(e["step_time_s"]),
            "ref_step_ms": _ms(e["reference_step_time_s"]), "compiles": e["compile_count"],
            "goal_metric": _name(e["goal_metric"]), "goal": e["goal_value"],
            "references": e["reference_status"],
            "absent": None if e["evidence_absent"] is None else [_name(x) for x in e["evidence_absent"]],
            "crit": [bool(e[c.name]) for c in CRITERIA], "ev": evidence.get(eid, []),
            "links": _copy_files(e, to_dir, runs_root),
        })
    return out


def _copy_files(e: dict[str, Any], to_dir: Path, runs_root: Path | None) -> dict[str, str]:
    """Copy the evaluation's report, trace and trajectory next to the page, every string cleaned
    by public_text (no host paths, no control characters); relative links."""
    if runs_root is None or not e["report_path"]:
        return {}
    root = Path(runs_root).expanduser().resolve()
    report = (root / e["run_id"] / e["report_path"]).resolve()
    if root not in report.parents or not report.is_file():  # ids from the store name no path
        return {}
    dest_rel = f"files/{e['evaluation_id'][:16]}"
    links: dict[str, str] = {}
    names = {"report": report.name, "trace": "trace.jsonl", "trajectory": "trajectory.json"}
    for label, name in names.items():
        text = _public_file(report.parent / name)
        if text is not None:
            (to_dir / dest_rel).mkdir(parents=True, exist_ok=True)
            (to_dir / dest_rel / name).write_text(text)
            links[label] = f"{dest_rel}/{name}"
    return links


def _public_file(src: Path) -> str | None:
    """A JSON or JSON-lines file with every string through public_text; None if unreadable."""
    if not src.is_file() or src.is_symlink():
        return None
    try:
        if src.suffix == ".jsonl":
            lines = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
            return "".join(json.dumps(public_json(x, FILE_TEXT_LIMIT, True)) + "\n" for x in lines)
        return json.dumps(public_json(json.loads(src.read_text()), FILE_TEXT_LIMIT, True), indent=1)
    except (OSError, ValueError):
        return None


def _ms(seconds: Any) -> Any:
    return None if seconds is None else float(seconds) * 1000  # the page's multiplication, here


def _name(value: Any) -> Any:
    return public_text(value, 100) if isinstance(value, str) else value


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return _name(value)
    if isinstance(value, float) and value != value:  # NaN
        return None
    if hasattr(value, "item"):
        return value.item()
    return float(value) if type(value).__name__ == "Decimal" else value
