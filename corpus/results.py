"""Reported results and the one the recorded command produces (issue 43).

A record's `curated.reported_results` lists the numbers its README (or the repository's own docs)
reports, each row `{metric, value, dataset, config}`: `config` says which configuration, model and
dataset the number belongs to, in the repository's words (`resnet32x4 -> resnet8x4, CRD`,
`VAR-d16, 256x256`). A record with rows also says which of them its `curated.train_command`
produces, in `curated.command_result`:

    command_result:
      config: <the configuration the command trains, in the rows' words>
      row: <index of the row it produces> | none | unknown
      why: <the evidence, citing file:line at the pinned commit>
      candidates: [<row>, ...]    # only with row: unknown, optional: the rows it may produce

`row: N` requires `reported_results[N].config == config` (the goal an agent reads is that row);
`none`: the repository reports no result for this configuration (no row may carry its config);
`unknown`: the reader could not establish which row, if any, the command produces. A row matches
when the README attributes it to what the command trains: the same model and data, and every
recipe setting the README states for that number (batch size, epochs, sampling); precision and a
GPU count that keeps the global batch do not make another configuration. Other rows with the
same config (another metric of the same run) are "also reported for this configuration".
"""

from __future__ import annotations

import re
from typing import Any

COMMAND_RESULT = "command_result"
ROW_KEYS = ("metric", "value", "dataset", "config")
COMMAND_KEYS = ("config", "row", "why")
OPTIONAL_KEYS = ("candidates",)
NONE, UNKNOWN = "none", "unknown"
MATCHED = "matched"
_EVIDENCE_REF = re.compile(r"[\w\-./]+\.\w+:\d+")
_FIELD = f"curated.{COMMAND_RESULT}"


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip()) and "\n" not in value


def row_problems(results: Any) -> list[tuple[str, str]]:
    """(field, what) for each malformed `curated.reported_results` row."""
    if not isinstance(results, list):
        return [("curated.reported_results", "must be a list ([] if none)")]
    out: list[tuple[str, str]] = []
    for i, res in enumerate(results):
        field = f"curated.reported_results[{i}]"
        if not isinstance(res, dict) or set(res) != set(ROW_KEYS):
            out.append((field, "must be {metric, value, dataset, config}: config names the "
                               "configuration, model and dataset the number belongs to"))
        elif not isinstance(res["value"], (int, float)) or isinstance(res["value"], bool):
            out.append((field + ".value", f"must be a number, found {res['value']!r}"))
        elif not all(_text(res[k]) for k in ("metric", "dataset", "config")):
            out.append((field, "metric, dataset and config must be one-line, non-empty strings"))
    return out


def command_problems(cur: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, what) for a missing or inconsistent `curated.command_result`."""
    results = cur.get("reported_results")
    if not isinstance(results, list):
        return []
    value = cur.get(COMMAND_RESULT)
    if value is None:
        return [] if not results else [(_FIELD, (
            f"missing: the record reports {len(results)} result(s); say which row the "
            "train_command produces ({config, row: N | none | unknown, why}, "
            "gpu2tpu.corpus.results docstring)"))]
    if not isinstance(value, dict) or not set(COMMAND_KEYS) <= set(value) \
            or set(value) - set(COMMAND_KEYS + OPTIONAL_KEYS):
        return [(_FIELD, "must be a mapping {config, row, why} (and candidates with row: "
                         "unknown)")]
    out: list[tuple[str, str]] = []
    if not _text(value["config"]):
        out.append((f"{_FIELD}.config", "must name the configuration the command trains (one "
                                        "line, in the rows' words)"))
    why = value["why"]
    if not _text(why) or not _EVIDENCE_REF.search(why):
        out.append((f"{_FIELD}.why", "must give the evidence citing file:line at the pinned "
                                     "commit (e.g. README.md:59)"))
    row = value["row"]
    if isinstance(row, bool) or not (isinstance(row, int) or row in (NONE, UNKNOWN)):
        out.append((f"{_FIELD}.row", f"must be a row index, {NONE!r} or {UNKNOWN!r}, found "
                                     f"{row!r}"))
    elif isinstance(row, int) and not 0 <= row < len(results):
        out.append((f"{_FIELD}.row", f"{row} is not a row of curated.reported_results (0.."
                                     f"{len(results) - 1})"))
    elif isinstance(row, int) and isinstance(results[row], dict) \
            and results[row].get("config") != value["config"]:
        out.append((f"{_FIELD}.row", f"row {row}'s config is {results[row].get('config')!r}, "
                    f"not the command's {value['config']!r}: point row at the row reported for "
                    "the command's configuration, or correct either config"))
    elif row == NONE and (hit := next((i for i, r in enumerate(results) if isinstance(r, dict)
                                        and r.get("config") == value["config"]), None)) \
            is not None:
        out.append((f"{_FIELD}.row", f"is none but row {hit} carries the command's config "
                                     f"{value['config']!r}: set row: {hit}, or correct a config"))
    if "candidates" in value:
        cand = value["candidates"]
        if row != UNKNOWN:
            out.append((f"{_FIELD}.candidates", "only with row: unknown (the rows the command may "
                                                "produce): drop it"))
        elif not isinstance(cand, list) or not cand or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c < len(results)
                for c in cand):
            out.append((f"{_FIELD}.candidates", "must be a non-empty list of row indices of "
                                                "curated.reported_results"))
    if not results and row != NONE:
        out.append((f"{_FIELD}.row", "the record reports no result: row must be none"))
    return out


def status(cur: dict[str, Any]) -> str | None:
    """matched / none / unknown for a record that declares it; None when it declares nothing."""
    value = cur.get(COMMAND_RESULT)
    if not isinstance(value, dict):
        return None
    row = value.get("row")
    if isinstance(row, int) and not isinstance(row, bool):
        return MATCHED
    return str(row) if row in (NONE, UNKNOWN) else None


def command_row(cur: dict[str, Any]) -> int | None:
    """The index of the row the command produces (None: none, unknown or undeclared)."""
    row = (cur.get(COMMAND_RESULT) or {}).get("row") if status(cur) == MATCHED else None
    return row if isinstance(row, int) else None


def candidates(cur: dict[str, Any]) -> list[int]:
    """With row: unknown, the rows the command may produce (the reader's shortlist), else []."""
    value = cur.get(COMMAND_RESULT)
    found = value.get("candidates") if status(cur) == UNKNOWN and isinstance(value, dict) else None
    return [c for c in found if isinstance(c, int)] if isinstance(found, list) else []
