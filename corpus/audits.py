"""Second-read audits of corpus records (`corpus/curation/audits/<id>.yaml`, issue 25).

A reader who did not write a record checks its claims against the pinned tree and writes one
file per record:

    record: <id>                      # the record's file name without .yaml
    commit: <40 hex>                  # the record's pinned commit
    reader: <who read it>
    claims:
      - field: scan.cuda_only.evidence[3].status   # a path that resolves in the record
        outcome: ok | corrected | unverifiable
        evidence: "<file:line and what it says, or a URL>"
        correction: <the right value; exactly when corrected, same type as the field>
        why: <one sentence; exactly when corrected or unverifiable>

Audits never edit records: a correction counts as applied once the record's field equals it
(a mapping may carry keys the correction does not name: fields added to the format later). A file
grows by later reads appended below earlier ones: of several claims about the same field, the
last one stands (a later read that corrected the field again supersedes the earlier correction).

"Verified" counts fields, not records (issue 43): AUDIT_FIELDS are the fields a second read checks;
a claim covers the field it names or one inside it (`scan.cuda_only.evidence[3].status` covers
`scan.cuda_only.evidence`). Per record and field, `field_statuses` says verified (claims ok, or
corrected and the record holds the correction), corrected-pending, unverifiable, or not checked;
a record is verified only when every field it has is.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from gpu2tpu.corpus.corrections import MISSING as _MISSING
from gpu2tpu.corpus.corrections import field_steps, resolve
from gpu2tpu.corpus.records import CURATION_DIR, PROJECTS_DIR, load_record, parse_yaml
from gpu2tpu.errors import UserError

AUDITS_DIR = CURATION_DIR / "audits"
OUTCOMES = ("ok", "corrected", "unverifiable")
AUDIT_KEYS = ("record", "commit", "reader", "claims")
CLAIM_KEYS = ("field", "outcome", "evidence", "correction", "why")
VERIFIED, PENDING, NOT_AUDITED = "verified", "corrected-pending", "not audited"
PARTLY = "partly verified"  # audited, nothing pending, but a field not checked or unverifiable
UNVERIFIABLE, NOT_CHECKED = "unverifiable", "not checked"
FIELD_STATUSES = (VERIFIED, PENDING, UNVERIFIABLE, NOT_CHECKED)

# the fields a second read checks against the pinned tree (what the card's "verified" counts)
AUDIT_FIELDS: tuple[str, ...] = (
    "commit", "scan.commit_date", "curated.licence_seen", "scan.licence",
    "curated.paper_title", "curated.paper_url", "curated.paper_year",
    "curated.train_command", "curated.datasets", "curated.reported_results",
    "curated.command_result", "curated.hardness_notes",
    "scan.cuda_only.training_roots", "scan.cuda_only.hard", "scan.cuda_only.evidence", "scan.tier",
    "scan.counts", "scan.training_path_counts",
    "scan.runnability.cpu_task", "scan.runnability.data", "scan.runnability.model",
    "environment.python", "environment.torch", "environment.cuda", "environment.install",
)

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class AuditError(UserError):
    """An audit file that does not fit the format or its record."""


@dataclass(frozen=True)
class Claim:
    field: str
    outcome: str
    evidence: str
    correction: Any = None
    why: str | None = None


@dataclass(frozen=True)
class Audit:
    path: Path
    record: str
    commit: str
    reader: str
    claims: tuple[Claim, ...]


class PendingCorrection(NamedTuple):
    record: str
    field: str
    current: Any
    correction: Any


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return "null" if value is None else type(value).__name__


def _claim_problems(i: int, raw: Any, record: dict[str, Any]) -> list[str]:
    where = f"claims[{i}]"
    if not isinstance(raw, dict):
        return [f"{where}: must be a mapping with field, outcome, evidence"]
    out: list[str] = []
    if extra := sorted(map(str, set(raw) - set(CLAIM_KEYS))):
        out.append(f"{where}: unknown key(s) {', '.join(extra)}: allowed are "
                   f"{', '.join(CLAIM_KEYS)}")
    field, outcome = raw.get("field"), raw.get("outcome")
    current: Any = _MISSING
    if not isinstance(field, str) or not field.strip():
        out.append(f"{where}.field: missing: name the record field the claim is about")
    else:
        try:
            current = resolve(record, field)
        except ValueError as exc:
            out.append(f"{where}.field: {exc}")
        else:
            if current is _MISSING:
                out.append(f"{where}.field: {field!r} does not resolve in the record: use a "
                           "path that exists (a list item the record lacks: correct the list)")
    if outcome not in OUTCOMES:
        out.append(f"{where}.outcome: must be one of {', '.join(OUTCOMES)}, found {outcome!r}")
    evidence = raw.get("evidence")
    if not isinstance(evidence, str) or not evidence.strip():
        out.append(f"{where}.evidence: missing: cite file:line at the pinned commit, or a URL")
    if outcome == "corrected" and "correction" not in raw:
        out.append(f"{where}: outcome corrected needs `correction` (the right value)")
    if outcome in ("ok", "unverifiable") and "correction" in raw:
        out.append(f"{where}: `correction` is only for outcome corrected, found outcome "
                   f"{outcome}: drop it or set outcome: corrected")
    why = raw.get("why")
    if outcome in ("corrected", "unverifiable") and (not isinstance(why, str) or not why.strip()):
        out.append(f"{where}.why: outcome {outcome} needs one sentence saying why")
    if outcome == "ok" and "why" in raw:
        out.append(f"{where}.why: only for outcome corrected or unverifiable: drop it")
    if outcome == "corrected" and "correction" in raw and current not in (_MISSING, None):
        want, have = _kind(raw["correction"]), _kind(current)
        if want != have:
            out.append(f"{where}.correction: is a {want}, the field {field} holds a {have}: "
                       "give the value in the field's own type")
    return out


def _parse(path: Path, projects_dir: Path) -> tuple[Audit | None, list[str]]:
    """The audit in `path` and its problems (each prefixed with the file's name)."""
    name = path.name
    try:
        raw = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return None, [f"{name}: does not parse: {str(exc).splitlines()[0]}"]
    if not isinstance(raw, dict):
        return None, [f"{name}: is not a YAML mapping with {', '.join(AUDIT_KEYS)}"]
    problems: list[str] = []
    if extra := sorted(map(str, set(raw) - set(AUDIT_KEYS))):
        problems.append(f"unknown key(s) {', '.join(extra)}: allowed are {', '.join(AUDIT_KEYS)}")
    rid, commit, reader, claims = (raw.get(k) for k in AUDIT_KEYS)
    if rid != path.stem:
        problems.append(f"record: {rid!r} differs from the file name: name the file <record>.yaml")
    if not (projects_dir / f"{path.stem}.yaml").is_file():
        return None, [f"{name}: no record corpus/projects/{path.stem}.yaml: audit an existing "
                      "record (its id is the file name)"]
    record = load_record(projects_dir / f"{path.stem}.yaml")
    if record.data is None:
        return None, [f"{name}: its record {record.error}: fix the record first"]
    if not isinstance(commit, str) or not _COMMIT.match(commit):
        problems.append(f"commit: must be the 40-hex pinned commit, found {commit!r}")
    elif commit != record.data.get("commit"):
        problems.append(f"commit: {commit} is not the record's pinned commit "
                        f"{record.data.get('commit')}: re-read the tree at the record's commit")
    if not isinstance(reader, str) or not reader.strip():
        problems.append("reader: missing: say who read the record")
    if not isinstance(claims, list) or not claims:
        problems.append("claims: must be a non-empty list of checked claims")
        claims = []
    for i, c in enumerate(claims):
        problems.extend(_claim_problems(i, c, record.data))
    if problems:
        return None, [f"{name}: {p}" for p in problems]
    parsed = tuple(Claim(c["field"], c["outcome"], c["evidence"], c.get("correction"),
                         c.get("why")) for c in claims)
    return Audit(path, path.stem, str(commit), str(reader), parsed), []


def _parse_all(audits_dir: Path, projects_dir: Path) -> tuple[dict[str, Audit], list[str]]:
    """Every valid audit by record id and every problem of every file, each file read once."""
    found: dict[str, Audit] = {}
    problems: list[str] = []
    for path in sorted(audits_dir.glob("*.yaml")) if audits_dir.is_dir() else []:
        audit, its = _parse(path, projects_dir)
        problems.extend(its)
        if audit is not None:
            found[audit.record] = audit
    return found, problems


def audit_problems(audits_dir: Path = AUDITS_DIR, projects_dir: Path = PROJECTS_DIR) -> list[str]:
    """Every problem of every audit file; empty when all are valid."""
    return _parse_all(audits_dir, projects_dir)[1]


def check_problems(audits_dir: Path = AUDITS_DIR, projects_dir: Path = PROJECTS_DIR) -> list[str]:
    """What `corpus check` says of the audits: every file's problems, or, when all are valid, each
    standing correction its record does not hold."""
    found, problems = _parse_all(audits_dir, projects_dir)
    if problems:
        return problems
    return [f"audits/{p.record}.yaml: {p.field}: the audit's standing correction is not what the "
            "record holds (fix the record, or append a later claim that supersedes it)"
            for a in found.values() for p in _pending(a, projects_dir)]


def load_audit(record_id: str, audits_dir: Path = AUDITS_DIR,
               projects_dir: Path = PROJECTS_DIR) -> Audit | None:
    """The record's audit (None when it has none); an invalid file raises AuditError."""
    path = audits_dir / f"{record_id}.yaml"
    if not path.is_file():
        return None
    audit, problems = _parse(path, projects_dir)
    if audit is None:
        raise AuditError(f"{audits_dir.name}/" + f"; {audits_dir.name}/".join(problems)
                         + ": fix the audit file (format: gpu2tpu.corpus.audits docstring)")
    return audit


def load_audits(audits_dir: Path = AUDITS_DIR,
                projects_dir: Path = PROJECTS_DIR) -> dict[str, Audit]:
    """Every audit by record id; any invalid file raises AuditError naming all problems."""
    found, problems = _parse_all(audits_dir, projects_dir)
    if problems:
        raise AuditError("; ".join(problems) + ": fix the audit files (format: "
                         "gpu2tpu.corpus.audits docstring)")
    return found


Triple = tuple[str, str, Any]  # a claim's (field, outcome, correction)


def _triples(audit: Audit | None) -> list[Triple]:
    return [(c.field, c.outcome, c.correction) for c in audit.claims] if audit else []


def standing(claims: Sequence[Triple]) -> list[Triple]:
    """The claims that stand: the last one per field, in order. A later claim about a part of
    an earlier claim's field supersedes that part: a later correction of
    `scan.training_path_counts.item` is what the earlier whole `scan.training_path_counts`
    correction now says of `item` (a later `ok` of a mapping's key drops that key from it)."""
    last = {c[0]: i for i, c in enumerate(claims)}
    out = []
    for i, (field, outcome, correction) in enumerate(claims):
        if last[field] != i:
            continue
        if outcome == "corrected":
            for later, later_outcome, later_correction in claims[i + 1:]:
                if later != field and covers(later, field):
                    correction = _superseded(correction, field, later, later_outcome, later_correction)
        out.append((field, outcome, correction))
    return out


def _superseded(correction: Any, field: str, later: str, outcome: str, value: Any) -> Any:
    """`correction` of `field` with the part a later claim about `later` (inside it) names
    replaced by that claim's correction, or dropped when the later claim found it ok."""
    try:
        steps = field_steps(later)[len(field_steps(field)):]
    except ValueError:
        return correction
    out = copy.deepcopy(correction)
    node = out
    for step in steps[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return correction  # the earlier correction has no such part: nothing to supersede
    last = steps[-1]
    if outcome == "corrected" and isinstance(node, (dict, list)):
        try:
            node[last] = value
        except (IndexError, TypeError):
            return correction
    elif outcome == "ok" and isinstance(node, dict):
        node.pop(last, None)
    return out


def _corrections(claims: Sequence[Triple]) -> list[tuple[str, Any]]:
    """(field, correction) of each standing correction."""
    return [(f, corr) for f, outcome, corr in standing(claims) if outcome == "corrected"]


def _pending(audit: Audit, projects_dir: Path) -> list[PendingCorrection]:
    data = load_record(projects_dir / f"{audit.record}.yaml").data or {}
    return _unapplied(audit.record, data, _corrections(_triples(audit)))


def _unapplied(record_id: str, data: dict[str, Any],
               corrections: list[tuple[str, Any]]) -> list[PendingCorrection]:
    """The (field, correction) pairs whose field in `data` does not hold the correction."""
    out = []
    for field, correction in corrections:
        try:
            current = resolve(data, field)
        except ValueError:  # not a field path (an unvalidated file): nothing holds it
            current = _MISSING
        if current is _MISSING or not holds(current, correction):
            out.append(PendingCorrection(record_id, field,
                                         None if current is _MISSING else current, correction))
    return out


def holds(current: Any, correction: Any) -> bool:
    """Whether a field holds an audit's correction: equal, except that a mapping may carry keys
    the correction does not name (fields added to the record format after the audit, such as a
    reported result's `config`); lists hold item by item."""
    if isinstance(correction, dict) and isinstance(current, dict):
        return all(k in current and holds(current[k], v) for k, v in correction.items())
    if isinstance(correction, list) and isinstance(current, list):
        return len(current) == len(correction) and all(
            holds(c, v) for c, v in zip(current, correction))
    return bool(current == correction)


def covers(claim_field: str, field: str) -> bool:
    """Whether a claim about `claim_field` checks (part of) `field`."""
    return claim_field == field or claim_field.startswith((field + ".", field + "["))


def field_statuses(record: dict[str, Any], claims: Sequence[Triple]) -> dict[str, str]:
    """Per AUDIT_FIELDS entry the record has: its status under `claims` (field, outcome,
    correction). A field the record lacks (no reported results: no command_result) is left out."""
    claims = standing(claims)
    out: dict[str, str] = {}
    for field in AUDIT_FIELDS:
        try:
            if resolve(record, field) is _MISSING:
                continue
        except ValueError:
            continue
        mine = [c for c in claims if covers(c[0], field)]
        if not mine:
            out[field] = NOT_CHECKED
        elif _unapplied(str(record.get("id")), record, _corrections(mine)):
            out[field] = PENDING
        elif any(outcome == "unverifiable" for _, outcome, _ in mine):
            out[field] = UNVERIFIABLE
        else:
            out[field] = VERIFIED
    return out


def _status_of(record: dict[str, Any], claims: Sequence[Triple]) -> str:
    if _unapplied(str(record.get("id")), record, _corrections(claims)):
        return PENDING
    statuses = field_statuses(record, claims).values()
    return VERIFIED if all(s == VERIFIED for s in statuses) else PARTLY


def audit_status(record_id: str, audits_dir: Path = AUDITS_DIR,
                 projects_dir: Path = PROJECTS_DIR) -> str:
    """"verified" (every audited field checked and holding), "partly verified", "corrected-pending"
    (a correction not yet in the record) or "not audited"."""
    audit = load_audit(record_id, audits_dir, projects_dir)
    if audit is None:
        return NOT_AUDITED
    data = load_record(projects_dir / f"{record_id}.yaml").data or {}
    return _status_of(data, _triples(audit))


def _raw_claims(record: dict[str, Any], audits_dir: Path) -> list[Triple] | None:
    """The claims of the record's audit file as given (None: no audit of its commit)."""
    path = audits_dir / f"{record.get('id')}.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, yaml.YAMLError):
        raw = None
    if not isinstance(raw, dict) or raw.get("commit") != record.get("commit"):
        return None
    return [(str(c.get("field")), str(c.get("outcome")), c.get("correction"))
            for c in raw.get("claims") or [] if isinstance(c, dict)]


def record_status(record: dict[str, Any], audits_dir: Path = AUDITS_DIR) -> str:
    """The status of a record as given (the dataset build's rows): "not audited" when no audit of
    its commit exists, else as `audit_status`. The audit files are validated by `corpus check`."""
    claims = _raw_claims(record, audits_dir)
    return NOT_AUDITED if claims is None else _status_of(record, claims)


def record_field_statuses(record: dict[str, Any], audits_dir: Path = AUDITS_DIR) -> dict[str, str]:
    """Per audited field of a record as given, its status (every field "not checked" when the
    record has no audit of its commit)."""
    return field_statuses(record, _raw_claims(record, audits_dir) or [])


def pending_corrections(audits_dir: Path = AUDITS_DIR,
                        projects_dir: Path = PROJECTS_DIR) -> list[PendingCorrection]:
    """(record, field, current value, correction) for every correction the record lacks."""
    return [p for a in load_audits(audits_dir, projects_dir).values()
            for p in _pending(a, projects_dir)]


def audit_summary(audits_dir: Path = AUDITS_DIR, projects_dir: Path = PROJECTS_DIR) -> dict[str, Any]:
    """Records audited, claims checked, corrected, unverifiable, the share corrected, pending, and
    the audited fields of every record by status (`fields`: what "verified" counts)."""
    audits = load_audits(audits_dir, projects_dir)
    claims = [c for a in audits.values() for c in a.claims]
    corrected = sum(c.outcome == "corrected" for c in claims)
    fields = dict.fromkeys(FIELD_STATUSES, 0)
    for path in sorted(projects_dir.glob("*.yaml")):
        data = load_record(path).data or {}
        for status in field_statuses(data, _triples(audits.get(path.stem))).values():
            fields[status] += 1
    return {
        "records_audited": len(audits),
        "claims_checked": len(claims),
        "corrected": corrected,
        "unverifiable": sum(c.outcome == "unverifiable" for c in claims),
        "share_corrected": round(corrected / len(claims), 4) if claims else 0.0,
        "records_pending": sum(bool(_pending(a, projects_dir)) for a in audits.values()),
        "fields": fields,
    }
