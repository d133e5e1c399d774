"""Verdicts as `evaluate`, `report` and `demo` print them: the table, and why each one failed.

A failing criterion's deciding evidence is its failing line whose category comes first in the
taxonomy (judge/criteria.py `CATEGORIES`, the order that names the verdict's category); lines
that name no category (a criterion not evaluated because the run stopped) come after those that
do. `--evidence` prints every line of every criterion.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu2tpu.judge.criteria import CATEGORIES, CRITERION_NAMES
from gpu2tpu.record.report import evaluation_name, read_json

_ORDER = {c: i for i, c in enumerate(CATEGORIES)}


def load_rows(run_dir: Path, evaluations: list[str]) -> list[dict[str, Any]]:
    return [read_json(run_dir / rel) for rel in evaluations]


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["agent"], r["task_id"], r["attempt"]))


def format_table(rows: list[dict[str, Any]]) -> str:
    head = ["agent", "task", *CRITERION_NAMES, "migrated", "silent", "category", "reference"]
    body = []
    for r in _sorted(rows):
        v = r["verdict"]
        marks = ["pass" if v["criteria"][c]["passed"] else "FAIL" for c in CRITERION_NAMES]
        body.append([r["agent"], r["task_id"] + (f".{r['attempt']}" if r["attempt"] > 1 else ""),
                     *marks, "yes" if v["migrated"] else "no", "yes" if v["silent"] else "no",
                     v["category"] or "-", (r.get("reference") or {}).get("device") or "-"])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*["-" * w for w in widths]),
                      *(fmt.format(*row) for row in body)])


def deciding(evidence: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The failing line that decides a criterion (None when every line passed)."""
    failing = [e for e in evidence if not e.get("ok")]
    return min(failing, key=lambda e: _ORDER.get(e.get("category") or "", len(_ORDER))) \
        if failing else None


def _heading(row: dict[str, Any]) -> str:
    v = row["verdict"]
    outcome = "migrated" if v.get("migrated") else \
        f"{v.get('category') or 'failed'}{' (silent)' if v.get('silent') else ''}"
    return f"{evaluation_name(row['agent'], row['task_id'], row['attempt'])}: {outcome}"


def why_failed(rows: list[dict[str, Any]]) -> str:
    """For each failing evaluation, the deciding evidence of each failing criterion (criteria
    whose deciding line reads the same share one line); empty when every one migrated."""
    out = []
    for row in _sorted(rows):
        v = row["verdict"]
        if v.get("migrated"):
            continue
        by_text: dict[str, list[str]] = {}
        for name in CRITERION_NAMES:
            line = deciding(v["criteria"][name].get("evidence") or [])
            if not v["criteria"][name]["passed"] and line is not None:
                by_text.setdefault(str(line.get("text")), []).append(name)
        out.append(_heading(row))
        out += [f"  {', '.join(names)}: {text}" for text, names in by_text.items()]
    if not out:
        return ""
    return "\n".join(["why (the deciding evidence of each failing criterion; --evidence prints "
                      "every line):", *out])


def all_evidence(rows: list[dict[str, Any]]) -> str:
    """Every evidence line of every criterion of every evaluation."""
    out = []
    for row in _sorted(rows):
        out.append(_heading(row))
        for name in CRITERION_NAMES:
            for e in row["verdict"]["criteria"][name].get("evidence") or []:
                mark = "ok  " if e.get("ok") else "FAIL"
                category = f" [{e['category']}]" if not e.get("ok") and e.get("category") else ""
                out.append(f"  {name:<11} {mark}  {e.get('text')}{category}")
    return "\n".join(out)
