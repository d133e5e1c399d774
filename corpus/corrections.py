"""Field paths into a record, and `curated.corrections`: audited corrections of derived fields.

A record's `scan:` and `environment:` blocks are written by tools (the scanner, the environment
extractor). When a second read finds one of their values wrong and no rule can derive the right
one yet, the correction is curated: `curated.corrections` lists items
`{field, value, reason}` where `field` is a path under `scan` or `environment`
(`scan.runnability.model.size`, `environment.torch[0]`), `value` the right value and `reason`
one sentence citing its evidence as file:line. Every writer of those blocks
(records.write_scan, records.write_environment) applies them, so a rescan keeps them, and
`corpus check` reports one that the record does not hold. Corrections of the scan's CUDA-only use
sites have their own, finer form (`curated.site_corrections`, corpus/records.py).
"""

from __future__ import annotations

import copy
import re
from typing import Any

CORRECTIONS = "corrections"
FIELD_ROOTS = ("id", "repo", "commit", "split", "curated", "environment", "scan")
CORRECTABLE_ROOTS = ("scan", "environment")
ITEM_KEYS = ("field", "value", "reason")
MISSING: Any = object()  # what `resolve` returns for a path that leads nowhere
_STEP = re.compile(r"([A-Za-z_][\w\-]*)((?:\[\d+\])*)")
_EVIDENCE_REF = re.compile(r"[\w\-./]+\.\w+:\d+")


def field_steps(field: str) -> list[str | int]:
    """`scan.cuda_only.evidence[3].status` -> ['scan', 'cuda_only', 'evidence', 3, 'status']."""
    steps: list[str | int] = []
    for part in field.split("."):
        m = _STEP.fullmatch(part)
        if m is None:
            raise ValueError(f"{field!r} is not a field path (write keys joined by '.', list "
                             "items as [N], e.g. scan.cuda_only.evidence[3].status)")
        steps.append(m.group(1))
        steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    if steps[0] not in FIELD_ROOTS:
        raise ValueError(f"{field!r} starts with {steps[0]!r}: a record field starts with one "
                         f"of {', '.join(FIELD_ROOTS)}")
    return steps


def resolve(data: Any, field: str) -> Any:
    """The record's value at `field`, or MISSING when the path does not lead anywhere."""
    return _walk(data, field_steps(field))


def _walk(data: Any, steps: list[str | int]) -> Any:
    value = data
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return MISSING
        elif not isinstance(value, dict) or step not in value:
            return MISSING
        value = value[step]
    return value


def problems(value: Any) -> list[tuple[str, str]]:
    """(field, what) for each problem of a `curated.corrections` value (absent: none)."""
    where = f"curated.{CORRECTIONS}"
    if value is None:
        return []
    if not isinstance(value, list):
        return [(where, "must be a list of {field, value, reason}")]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(item, dict) or set(item) != set(ITEM_KEYS):
            out.append((at, "must be a mapping with exactly the keys field, value, reason"))
            continue
        field, reason = item["field"], item["reason"]
        try:
            steps = field_steps(str(field))
        except ValueError as e:
            out.append((f"{at}.field", str(e)))
            continue
        if steps[0] not in CORRECTABLE_ROOTS or len(steps) < 2:
            out.append((f"{at}.field", f"{field!r}: only fields under "
                        f"{' or '.join(CORRECTABLE_ROOTS)} are corrected here (edit curated "
                        "fields in place)"))
        if not isinstance(reason, str) or "\n" in reason or not _EVIDENCE_REF.search(reason):
            out.append((f"{at}.reason", "must be one line citing its evidence as file:line"))
        if field in seen:
            out.append((at, f"corrects {field} twice"))
        seen.add(str(field))
    return out


def apply(record: dict[str, Any], root: str, block: Any) -> Any:
    """`block` (the record's `root` block as a tool derived it) with the record's curated
    corrections under `root` applied; a correction whose path no longer leads anywhere is left
    out here and reported by `corpus check` (unapplied)."""
    items = (record.get("curated") or {}).get(CORRECTIONS)
    if not isinstance(items, list) or not isinstance(block, dict):
        return block
    out = copy.deepcopy(block)
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("field"), str):
            continue
        try:
            steps = field_steps(item["field"])
        except ValueError:
            continue
        if steps[0] != root or len(steps) < 2:
            continue
        parent = _walk(out, steps[1:-1])
        last = steps[-1]
        if isinstance(last, int) and isinstance(parent, list) and last < len(parent):
            parent[last] = copy.deepcopy(item.get("value"))
        elif isinstance(last, str) and isinstance(parent, dict):
            parent[last] = copy.deepcopy(item.get("value"))
    return out


def unapplied(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, what) for each valid correction the record's blocks do not hold."""
    items = (record.get("curated") or {}).get(CORRECTIONS)
    if problems(items) or not isinstance(items, list):
        return []
    out = []
    for i, item in enumerate(items):
        if resolve(record, item["field"]) != item["value"]:
            out.append((f"curated.{CORRECTIONS}[{i}]",
                        f"{item['field']} does not hold the corrected value: rewrite the block "
                        "(`gpu2tpu corpus scan --record` or `corpus environment --record`)"))
    return out
