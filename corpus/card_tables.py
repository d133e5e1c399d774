"""The dataset card's generated tables: schema, difficulty formula, licences, runnability, the
considered candidates, and the changelog from the curation logs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from gpu2tpu.corpus import difficulty
from gpu2tpu.corpus.records import Considered


@dataclass(frozen=True)
class Change:
    """One changelog entry generated from a curation log."""

    title: str
    source: str  # the log's file name under corpus/curation/
    items: list[str]


def feature_name(feature: Any) -> str:
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{k}: {feature_name(v)}" for k, v in feature.items()) + "}"
    inner = getattr(feature, "feature", None)
    if inner is not None:
        return f"list<{feature_name(inner)}>"
    return str(getattr(feature, "dtype", feature))


def schema_table(columns: dict[str, tuple[Any, str]]) -> str:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    for name, (feature, meaning) in columns.items():
        kind = feature_name(feature)
        if len(kind) > 60:  # long structs: name the type, the keys are listed elsewhere
            kind = kind.split("{")[0] + "{...}" + (">" if kind.startswith("list<") else "")
        lines.append(f"| `{name}` | {kind} | {meaning} |")
    return "\n".join(lines)


def formula_table() -> str:
    lines = ["| component | weight | half at | counts summed |", "|---|---:|---:|---|"]
    for name, weight, half, keys in difficulty.COMPONENTS:
        shown = ", ".join("CUDA-only package count" if k == "deps" else k.replace("size:", "")
                          for k in keys)
        lines.append(f"| {name} | {weight:g} | {half:g} | {shown} |")
    return "\n".join(lines)


def licence_table(projects: list[dict[str, Any]]) -> str:
    counts = Counter((str(r.get("licence")), str(r.get("split"))) for r in projects)
    lines = ["| licence (detected) | split | projects |", "|---|---|---:|"]
    for (spdx, split), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {spdx} | {split} | {n} |")
    return "\n".join(lines)


def runnability_table(projects: list[dict[str, Any]]) -> str:
    counts = Counter(str(r.get("cpu_task")) for r in projects)
    lines = ["| cpu_task | projects | examples |", "|---|---:|---|"]
    for verdict in ("likely", "possible", "unlikely"):
        names = sorted(str(r.get("repo")) for r in projects if r.get("cpu_task") == verdict)
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        lines.append(f"| {verdict} | {counts[verdict]} | {shown} |")
    return "\n".join(lines)


def considered_table(rows: list[Considered]) -> str:
    counts = Counter((r.decision, r.reason) for r in rows)
    lines = ["| decision | reason | candidates |", "|---|---|---:|"]
    for (decision, reason), n in sorted(counts.items()):
        lines.append(f"| {decision} | {reason} | {n} |")
    lines.append(f"| **total** | | {len(rows)} |")
    return "\n".join(lines)


def changelog(changes: list[Change]) -> str:
    if not changes:
        return "No curation log records a change yet."
    parts = []
    for change in changes:
        items = "\n".join(f"- {item}" for item in change.items) or "- (no details logged)"
        parts.append(f"### {change.title}\n\nFrom `corpus/curation/{change.source}`.\n\n{items}")
    return "\n\n".join(parts)


def second_reads(projects: list[dict[str, Any]]) -> str:
    """The audit, data-fact and problem-statement paragraphs, counted from the rows and from the
    audit files of the records present."""
    from gpu2tpu.corpus import audits, data_facts

    read = data_facts.catalog_read_summary()
    ids = {str(r.get("id")) for r in projects}
    try:
        found = [a for rid, a in audits.load_audits().items() if rid in ids]
    except audits.AuditError:
        found = []
    claims = [c for a in found for c in a.claims]
    corrected = sum(1 for c in claims if c.outcome == "corrected")
    unverifiable = sum(1 for c in claims if c.outcome == "unverifiable")
    status = Counter(str(r.get("audit_status")) for r in projects)
    fields = Counter(str(f.get("status")) for r in projects for f in r.get("audit_fields") or [])
    share = f"{corrected / len(claims):.1%}" if claims else "n/a"
    facts = [f for r in projects for f in r.get("data") or []]
    entries = {f.get("dataset") for f in facts}
    stated = sum(1 for r in projects if r.get("model_params"))
    told = [r["command_result"] for r in projects if r.get("command_result")]
    goals = Counter(str(c.get("status")) for c in told)
    return (
        f"**Second reads, per field.** A reader who did not write a record checks its fields "
        "against the pinned tree (`corpus/curation/audits/`): the "
        f"{len(audits.AUDIT_FIELDS)} audited fields (`gpu2tpu.corpus.audits.AUDIT_FIELDS`) of "
        f"{len(projects)} records make {sum(fields.values())} field values: "
        f"{fields[audits.VERIFIED]} verified (checked, and right or corrected), "
        f"{fields[audits.UNVERIFIABLE]} unverifiable, {fields[audits.PENDING]} with a correction "
        f"not yet applied, {fields[audits.NOT_CHECKED]} not checked (column `audit_fields`). "
        f"{len(found)} records have an audit: {len(claims)} claims, {corrected} corrected "
        f"({share}), {unverifiable} unverifiable. A record is `verified` (column `audit_status`) "
        "only when every one of its audited fields is: "
        + ", ".join(f"{k} {status[k]}" for k in (audits.VERIFIED, audits.PARTLY, audits.PENDING,
                                                  audits.NOT_AUDITED))
        + ". Corrections of curated fields are made in the records; corrections of derived "
        "fields (scan, environment) are kept, with their evidence, as `curated.corrections`, "
        "which every writer of those blocks applies.\n\n"
        f"**Data facts** (column `data`): {len(facts)} dataset mentions resolve to "
        f"{len(entries)} entries of `corpus/datasets.yaml`: "
        f"{sum(1 for f in facts if f.get('gated'))} gated, "
        f"{sum(1 for f in facts if f.get('gated') is None)} whose access terms are `unknown` "
        "(`gated` null), "
        f"{sum(1 for f in facts if f.get('standin'))} with a stand-in a task already writes, "
        f"{sum(1 for f in facts if f.get('licence_or_terms') == 'unknown')} with licence or "
        "terms `unknown` (not established). Each entry names the pages its facts come from "
        f"(`evidence`). A second read checked {read['read']} of the {read['entries']} entries "
        f"against those sources (the most-named first; field `second_read`): {read['ok']} ok, "
        f"{read['corrected']} corrected, {read['unverifiable']} whose main fact no source "
        "established (their values stand as first written). "
        f"{stated} records state their model's parameter count in the pinned tree "
        "(column `model_params`, file:line).\n\n"
        "**Problem statements** (columns `problem_statement`, `problem_claims`): what `migrated` "
        "means for each project, generated from the record alone (`corpus/problem.py`); every "
        "fact in the text is a claim naming the record field it comes from. The goal metric is "
        "the reported result the record says its training command produces (column "
        f"`command_result`): of {len(told)} records with reported results, "
        f"{goals['matched']} name the command's row, {goals['none']} say the repository "
        f"reports no result for the command's configuration and {goals['unknown']} that it "
        "is not established; their statements say so instead of giving a goal."
    )
