"""Combine the five criteria into a verdict: migrated, silent, failure category."""

from __future__ import annotations

from typing import Any

from gpu2tpu.judge.criteria import CATEGORIES, CRITERIA, CRITERION_NAMES, CriterionResult, Inputs
from gpu2tpu.record.targets import Target
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.tasks.spec import RunSpec

_STOPS_RUN = ("patch_rejected", "crash", "timeout")


def grade(spec: RunSpec, target: Target, refs: list[RunRecord], gold: RunRecord,
          cand: RunRecord, calibration: dict[str, Trace] | None = None) -> dict[str, Any]:
    """The verdict for one candidate run: a pure function of its inputs."""
    if not refs or any(r.exit_code != 0 for r in refs) or gold.exit_code != 0:
        return infra_verdict("reference or gold run did not complete; the task cannot be graded here")
    if not cand.trace.start and not cand.process.get("patch_rejected") and not cand.process.get("timed_out"):
        return infra_verdict("the probe did not start in the candidate run (no start record in its "
                             "trace); the harness could not observe it")
    inputs = Inputs(spec, target, refs, gold, cand, calibration or {})
    results: dict[str, CriterionResult] = {}
    for criterion in CRITERIA:
        if not criterion.needs_run:
            results[criterion.name] = criterion.check(inputs)
    stopped = bool(cand.process.get("timed_out")) or any(
        not r.passed and any(e["category"] in _STOPS_RUN for e in r.evidence) for r in results.values())
    for criterion in CRITERIA:
        if criterion.name in results:
            continue
        results[criterion.name] = CriterionResult(criterion.name, [{
            "ok": False, "category": None, "text": "not evaluated: the migration did not run"}]) \
            if stopped else criterion.check(inputs)
    return combine(results, exited_zero=cand.exit_code == 0 and not cand.process.get("patch_rejected"))


# Categories that are not the agent's failure: the grader could not judge the run (a silent failure
# is the agent's, so neither is one; the leaderboard does not score them)
NOT_JUDGED = ("unverified", "infra")


def combine(results: dict[str, CriterionResult], exited_zero: bool) -> dict[str, Any]:
    found = {e["category"] for r in results.values() for e in r.evidence if e["category"]}
    categories = [c for c in CATEGORIES if c in found]
    migrated = all(r.passed for r in results.values())
    judged = not categories or categories[0] not in NOT_JUDGED
    return {"migrated": migrated, "silent": (not migrated) and exited_zero and judged,
            "category": categories[0] if categories else None, "categories": categories,
            "failing": [n for n in CRITERION_NAMES if not results[n].passed],
            "criteria": {n: results[n].to_dict() for n in CRITERION_NAMES}}


def infra_verdict(reason: str) -> dict[str, Any]:
    line = {"ok": False, "text": reason, "category": "infra"}
    results = {n: CriterionResult(n, [dict(line)]) for n in CRITERION_NAMES}
    return combine(results, exited_zero=False)
