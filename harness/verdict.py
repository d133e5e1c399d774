"""Combine the five criteria into a verdict: migrated, silent, failure category."""

from __future__ import annotations

from typing import Any

from gpu2tpu.harness import criteria
from gpu2tpu.harness.criteria import CriterionResult
from gpu2tpu.harness.spec import CATEGORIES, CRITERIA, RunSpec
from gpu2tpu.harness.trace import RunRecord

_STOPS_RUN = ("patch_rejected", "crash", "timeout")


def grade(spec: RunSpec, target: str, refs: list[RunRecord], gold: RunRecord,
          cand: RunRecord) -> dict[str, Any]:
    """The verdict for one candidate run: a pure function of its inputs."""
    if not refs or any(r.exit_code != 0 for r in refs) or gold.exit_code != 0:
        return infra_verdict("reference or gold run did not complete; the task cannot be graded here")
    results = {"runs": criteria.runs(spec, cand)}
    if results["runs"].passed or not any(
            e["category"] in _STOPS_RUN for e in results["runs"].evidence):
        results["numerics"] = criteria.numerics(spec, refs, cand)
        results["hardware"] = criteria.hardware(spec, target, gold, cand)
        results["goal"] = criteria.goal(spec, refs, cand)
        results["performance"] = criteria.performance(spec, gold, cand)
    for name in CRITERIA:
        if name not in results:
            results[name] = CriterionResult(name, [{"ok": False, "category": None,
                                                    "text": "not evaluated: the migration did not run"}])
    return combine(results, exited_zero=cand.exit_code == 0 and not cand.process.get("patch_rejected"))


def combine(results: dict[str, CriterionResult], exited_zero: bool) -> dict[str, Any]:
    found = {e["category"] for r in results.values() for e in r.evidence if e["category"]}
    categories = [c for c in CATEGORIES if c in found]
    migrated = all(r.passed for r in results.values())
    return {"migrated": migrated, "silent": (not migrated) and exited_zero,
            "category": categories[0] if categories else None, "categories": categories,
            "failing": [n for n in CRITERIA if not results[n].passed],
            "criteria": {n: results[n].to_dict() for n in CRITERIA}}


def infra_verdict(reason: str) -> dict[str, Any]:
    line = {"ok": False, "text": reason, "category": "infra"}
    results = {n: CriterionResult(n, [dict(line)]) for n in CRITERIA}
    return combine(results, exited_zero=False)
