"""Leaderboard views: parameterised queries kept as `.sql` files, and their output formats."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu2tpu.leaderboard.criteria_sql import expand_criteria
from gpu2tpu.leaderboard.schema import NOT_JUDGED_SQL

if TYPE_CHECKING:
    import duckdb

SQL_DIR = Path(__file__).resolve().parent / "sql"
VIEWS = ("agents", "tasks", "failures", "costs", "calibration")
FORMATS = ("table", "csv", "json", "markdown")
_PARAMS = re.compile(r"^--\s*params:\s*(.*)$", re.MULTILINE)


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def view_sql(name: str) -> str:
    if name not in VIEWS:
        raise KeyError(f"unknown view {name!r}; choose one of {', '.join(VIEWS)}")
    return expand_criteria((SQL_DIR / f"{name}.sql").read_text()).replace("{not_judged}",
                                                                          NOT_JUDGED_SQL)


def view_params(sql: str) -> list[str]:
    """Parameter names declared in the `-- params:` header line (`name (TYPE ...)`, ...)."""
    match = _PARAMS.search(sql)
    if not match:
        return []
    names = []
    for part in re.split(r",(?![^()]*\))", match.group(1)):
        name = part.strip().split(" ", 1)[0]
        if name:
            names.append(name)
    return names


TRUSTS = ("verified", "self-reported", "all")


def default_trust(view: str) -> str:
    """`agents` lists both (ranked verified first, self-reported apart); the aggregate views
    count verified results unless asked otherwise."""
    return "all" if view == "agents" else "verified"


def view_filters(view: str, filters: dict[str, Any]) -> dict[str, Any]:
    """Fill the view's declared parameters: missing ones are NULL (no filter); trust 'all' -> NULL."""
    params = {p: filters.get(p) for p in view_params(view_sql(view))}
    if "trust" in params:
        trust = params["trust"] or default_trust(view)
        params["trust"] = None if trust == "all" else trust
    return params


def run_view(con: duckdb.DuckDBPyConnection, name: str, **filters: Any) -> Result:
    """Run one view; `filters` fill its declared parameters (see view_filters)."""
    sql = view_sql(name)
    params = view_filters(name, filters)
    return run_sql(con, sql, params)


def hidden_note(con: duckdb.DuckDBPyConnection, name: str, **filters: Any) -> str | None:
    """One line saying how many results the view's trust filter left out, or None."""
    params = view_filters(name, filters)  # only the filters this view declares
    trust = params.get("trust")
    if trust is None:
        return None
    hidden = con.execute(
        "SELECT trust, count(*) FROM evaluations WHERE trust <> $trust "
        "AND (CAST($agent AS VARCHAR) IS NULL OR agent = CAST($agent AS VARCHAR)) "
        "AND (CAST($task AS VARCHAR) IS NULL OR task_id = CAST($task AS VARCHAR)) GROUP BY 1 ORDER BY 1",
        {"trust": trust, "agent": params.get("agent"), "task": params.get("task")},
    ).fetchall()
    if not hidden:
        return None
    counts = ", ".join(f"{n} {kind}" for kind, n in hidden)
    kinds = " or ".join(kind for kind, _ in hidden)
    return (f"{counts} result{'s' if sum(n for _, n in hidden) > 1 else ''} not counted here "
            f"(showing {trust} only); pass --trust all or --trust {kinds} to include them")


def run_sql(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> Result:
    cur = con.execute(sql, params or {})
    columns = [d[0] for d in (cur.description or [])]
    return Result(columns, cur.fetchall())


def render(result: Result, fmt: str) -> str:
    if fmt == "json":
        return json.dumps([_jsonable_row(r) for r in result.records()], indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([[_text(v, csv_mode=True) for v in row] for row in result.rows])
        return buf.getvalue()
    cells = [[_text(v) for v in row] for row in result.rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(result.columns) + " |"]
        lines.append("|" + "|".join("---" for _ in result.columns) + "|")
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    if fmt == "table":
        widths = [len(c) for c in result.columns]
        for row in cells:
            widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
        out = ["  ".join(c.ljust(w) for c, w in zip(result.columns, widths, strict=True))]
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
        if not cells:
            out.append("(no rows)")
        return "\n".join(line.rstrip() for line in out) + "\n"
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _text(value: Any, csv_mode: bool = False) -> str:
    if value is None:
        return "" if csv_mode else "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:g}"
    if isinstance(value, list):
        return ";".join(_text(v) for v in value)
    return str(value)


def _jsonable_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        if isinstance(value, float) and math.isnan(value):
            value = None
        elif not isinstance(value, str | int | float | bool | list | dict | type(None)):
            value = str(value)  # dates, decimals
        out[key] = value
    return out
