"""The static scan's evidence lines: one `tampered` line per finding of the evaluation's saved
scan.json (record/tamper_scan.py writes it before the candidate runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu2tpu.judge.kernel_checks import UNVERIFIED
from gpu2tpu.record.tamper_scan import SOURCE

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult

MAX_LINES = 20  # evidence lines per evaluation; scan.json keeps every finding


def check_scan(res: CriterionResult, scan: dict[str, Any] | None, expected: bool = False) -> None:
    """One `tampered` line per finding of the evaluation's saved scan. Without one (`scan` None: no
    scan.json, or one report.json does not list), one failing line: `unverified` for a run recorded
    before the harness kept scans (the patch was never scanned; evidence the grader lacks is never a
    pass), `infra` where the harness that recorded the run keeps one (`expected`), as a kernel
    view's absence is worded (kernel_checks.py)."""
    if scan is None:
        res.check(False, f"source: {SOURCE}: no scan of this run's patch" + (
            " although the harness that recorded it keeps one (its kernel views are listed): "
            "the evaluation is incomplete" if expected
            else " (recorded before the harness kept one): the patch was never scanned, so the run "
            "is unverified; grade it again with this harness"),
            "infra" if expected else UNVERIFIED, source=SOURCE)
        return
    findings = scan.get("findings")
    if not isinstance(findings, list):
        res.check(False, f"source: {SOURCE}: scan.json holds no list of findings: not a scan this "
                  "harness wrote; the evaluation is incomplete", "infra", source=SOURCE)
        return
    findings = [f if isinstance(f, dict) else {"code": str(f)[:200]} for f in findings]
    for f in findings[:MAX_LINES]:
        res.check(False, f"source: {SOURCE}: {f.get('file')}:{f.get('line')} adds `{f.get('code')}`: "
                  f"{f.get('what')} ({f.get('detail')}); {f.get('why')}", "tampered")
        res.evidence[-1].update(source=SOURCE, rule=f.get("rule"))
    if len(findings) > MAX_LINES:
        res.check(False, f"source: {SOURCE}: {len(findings) - MAX_LINES} more findings in scan.json",
                  "tampered")
    if not findings:
        res.check(True, f"source: {SOURCE}: {scan.get('added_lines')} added lines hold nothing a "
                  "migration never needs", "tampered")
    res.evidence[-1]["source"] = SOURCE
