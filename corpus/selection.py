"""The selection rule: which candidates fill the corpus, computed from the logs, never by hand.

Inputs: the records (read candidates that passed criteria 1-7), the considered logs, the
candidate scans (`curation/candidate-scans.tsv`: facts the scanner read from candidates not
records) and the rule's parameters (`curation/selection.yaml`). The result is a pure function of
those inputs: the order of records, log rows or scan rows never matters (tested on permutations).

Read outcomes, from the logs: a candidate *failed* its read when a row excludes it for a criterion
(anything but `owner_cap`/`quota_full`); it *passed* when it is a record, has an `ok` row, or a
rule row says it "was a record" (a record the rule dropped stays read and passed); otherwise it is
*unread*. Failed candidates are never eligible; passed and unread ones always are, so a record
the rule drops is a candidate again at the next selection.

The rule, in order:

1. Preference (one key, everywhere): upstream tasks first; then the tier-3 reserve (below);
   then a permissive licence (the `main` split, whose code tasks can ship); then fewer Python
   lines; then the repo name. The key is tier-neutral: it has no "no hard CUDA-only dependency"
   term, because INCLUSION.md seeks tier-3 projects on purpose (at least `tier3_min`).
2. Owner cap: an owner keeps its first `owner_cap` *passed* candidates by the key. An unread
   candidate that ranks within its owner's first `owner_cap` is read next; it displaces a passed
   candidate only once it has passed its read (reads happen before displacement), so a failed read
   never costs a passing record its slot.
3. Target: passed candidates within the owner cap keep their slots (by the key, no domain above
   `domain_cap_share` of `target_count`); slots still free up to `target_count` go to unread
   candidates within the owner cap, by (domain with the fewest selected so far, key).
4. Tier-3 floor: when the selection holds fewer than `tier3_min` tier-3 candidates (a hard
   CUDA-only dependency on the training path), the best `tier3_min` tier-3 candidates by the key
   (at most `owner_cap` per owner) form the reserve, which ranks right after the tasks and fills
   first, and the rule runs again.
A selected candidate that is not yet a record is read (curated) next; its outcome is logged and
the rule runs again. A passed candidate selected but not a record is restored (`restore`).
Drop reasons: `owner_cap` (the owner keeps `owner_cap` passed candidates that rank higher, named)
and `quota_full` (its domain or the target is full of candidates that rank higher).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus.patterns import PERMISSIVE_SPDX
from gpu2tpu.corpus.records import Considered

SELECTION_RULES = "selection.yaml"
CANDIDATE_SCANS = "candidate-scans.tsv"
SCAN_COLUMNS = ("repo", "commit", "domain", "python_lines", "hard_cuda_deps", "licence")
RULE_REASONS = {"owner_cap", "quota_full"}
# a rule row for a record the rule dropped says so in its detail: the read outcome it keeps
OUTCOMES = ("unread", "passed", "failed")  # a later one overrides an earlier one
WAS_RECORD = re.compile(r"\bwas a record\b", re.IGNORECASE)
# candidates.tsv's first domain guesses -> the corpus's 12 domains (a curator confirms on reading):
# the first prefix that matches wins.
DOMAIN_PREFIXES: tuple[tuple[str, str], ...] = (
    ("vision-ssl", "vision-ssl"), ("vision-contrastive", "vision-ssl"),
    ("vision-semi", "vision-ssl"), ("video-ssl", "vision-ssl"),
    ("vision-detection", "vision-dense"), ("vision-segmentation", "vision-dense"),
    ("vision-pose", "vision-dense"), ("vision-optical-flow", "vision-dense"),
    ("vision-wsol", "vision-dense"), ("vision-super", "vision-dense"),
    ("video-prediction", "vision-dense"), ("video-language", "multimodal"), ("video", "vision-dense"),
    ("vision", "vision"), ("3d", "3d"), ("nerf", "3d"), ("gan-3d", "3d"), ("gan", "generative"),
    ("generative", "generative"), ("diffusion", "generative"), ("nlp", "nlp"),
    ("speech", "audio"), ("audio", "audio"), ("rl", "rl"), ("multimodal", "multimodal"),
    ("vqa", "multimodal"), ("timeseries", "sequence"), ("sequence", "sequence"),
    ("weather", "sequence"), ("pde", "sequence"), ("gnn", "graph"), ("kg", "graph"),
)


def domain_of_guess(guess: str) -> str:
    return next((dom for prefix, dom in DOMAIN_PREFIXES if guess.startswith(prefix)), "other")


@dataclass(frozen=True)
class Candidate:
    repo: str
    domain: str
    python_lines: int
    hard: bool  # a hard CUDA-only dependency on the training path: tier 3
    permissive: bool
    is_task: bool
    is_record: bool
    passed_read: bool = False  # read and passed, but not a record (the rule dropped it)
    reserved: bool = False  # in the tier-3 reserve (rule 4)

    @property
    def owner(self) -> str:
        return self.repo.split("/")[0].lower()

    @property
    def passed(self) -> bool:
        return self.is_record or self.passed_read

    def key(self) -> tuple[bool, bool, bool, int, str]:
        return (not self.is_task, not self.reserved, not self.permissive, self.python_lines,
                self.repo.lower())


@dataclass
class Selection:
    chosen: list[Candidate]  # passed candidates kept, plus unread ones picked for free slots
    dropped: list[tuple[Candidate, str]]  # passed candidates the rule leaves out, with why
    to_read: list[Candidate] = field(default_factory=list)  # unread: read these next
    tier3_short: int = 0  # tier-3 candidates missing below `tier3_min` even with the reserve

    @property
    def restore(self) -> list[Candidate]:
        """Passed candidates the rule selects that are not records: restore their records."""
        return [c for c in self.chosen if c.passed_read]


def load_rules(curation_dir: Path) -> dict[str, Any]:
    path = curation_dir / SELECTION_RULES
    try:
        rules = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read the selection rule ({exc})") from exc
    for key in ("owner_cap", "domain_cap_share", "target_count", "tasks"):
        if key not in (rules or {}):
            raise ValueError(f"{path}: missing `{key}`; see corpus/selection.py for the rule")
    return dict(rules)


def load_candidate_scans(curation_dir: Path) -> list[dict[str, str]]:
    path = curation_dir / CANDIDATE_SCANS
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def read_outcomes(considered: list[Considered]) -> dict[str, str]:
    """repo (lower case) -> `failed`, `passed` or `unread`, from the considered logs."""
    out: dict[str, str] = {}
    for row in considered:
        repo = row.repo.lower()
        if row.decision == "excluded" and row.reason not in RULE_REASONS:
            outcome = "failed"
        elif row.reason == "ok" or WAS_RECORD.search(row.detail):
            outcome = "passed"
        else:
            outcome = "unread"
        # failed beats passed beats unread, whatever the order of the rows
        if repo not in out or OUTCOMES.index(outcome) > OUTCOMES.index(out[repo]):
            out[repo] = outcome
    return out


def eligible(records: list[dict[str, Any]], considered: list[Considered],
             scans: list[dict[str, str]], tasks: set[str]) -> list[Candidate]:
    """Records plus scanned candidates that did not fail a read (passed or unread)."""
    outcome = read_outcomes(considered)
    out: dict[str, Candidate] = {}
    for rec in sorted(records, key=lambda r: str(r["repo"])):
        scan, cur = rec.get("scan") or {}, rec.get("curated") or {}
        repo = str(rec["repo"])
        tier = scan.get("tier")
        hard = tier == 3 if tier is not None else bool((scan.get("cuda_only") or {}).get("hard"))
        out.setdefault(repo.lower(), Candidate(
            repo, str(cur.get("domain")), int((scan.get("size") or {}).get("python_lines", 0)),
            hard, rec.get("split") == "main", repo in tasks, True))
    for row in sorted(scans, key=lambda r: tuple(r.get(k) or "" for k in SCAN_COLUMNS)):
        repo = row["repo"]
        got = outcome.get(repo.lower())
        if repo.lower() in out or got not in ("passed", "unread"):
            continue
        out[repo.lower()] = Candidate(repo, row["domain"], int(row["python_lines"]),
                                      bool(row["hard_cuda_deps"]),
                                      row["licence"] in PERMISSIVE_SPDX, repo in tasks, False,
                                      passed_read=got == "passed")
    return sorted(out.values(), key=Candidate.key)


def select(cands: list[Candidate], rules: dict[str, Any]) -> Selection:
    """The rule (module docstring); the order of `cands` does not matter."""
    sel = _select(cands, rules)
    floor = int(rules.get("tier3_min", 0))
    if sum(c.hard for c in sel.chosen) >= floor:
        return sel
    cap, per_owner, reserve = int(rules["owner_cap"]), Counter[str](), set[str]()
    for c in sorted((c for c in cands if c.hard), key=Candidate.key):
        if len(reserve) < floor and per_owner[c.owner] < cap:
            per_owner[c.owner] += 1
            reserve.add(c.repo.lower())
    sel = _select([replace(c, reserved=c.repo.lower() in reserve) for c in cands], rules)
    sel.tier3_short = max(0, floor - sum(c.hard for c in sel.chosen))
    return sel


def _select(cands: list[Candidate], rules: dict[str, Any]) -> Selection:
    cap, target = int(rules["owner_cap"]), int(rules["target_count"])
    dom_cap = int(float(rules["domain_cap_share"]) * target)
    by_owner: dict[str, list[Candidate]] = {}
    for c in sorted({c.repo.lower(): c for c in cands}.values(), key=Candidate.key):
        by_owner.setdefault(c.owner, []).append(c)
    chosen: list[Candidate] = []
    domains: Counter[str] = Counter()
    owners: Counter[str] = Counter()
    dropped: list[tuple[Candidate, str]] = []
    for c in sorted((c for g in by_owner.values() for c in g if c.passed), key=Candidate.key):
        if c.is_task or (owners[c.owner] < cap and domains[c.domain] < dom_cap
                         and len(chosen) < target):
            chosen.append(c)
            domains[c.domain] += 1
            owners[c.owner] += 1
            continue
        if owners[c.owner] >= cap:
            names = ", ".join(k.repo for k in chosen if k.owner == c.owner)
            why = f"owner_cap: {c.owner} keeps {cap} passed candidates ranked higher ({names})"
        elif domains[c.domain] >= dom_cap:
            why = f"quota_full: domain {c.domain} holds {dom_cap} candidates ranked higher"
        else:
            why = f"quota_full: the target {target} is reached by candidates ranked higher"
        dropped.append((c, why))
    # unread candidates within their owner's first `cap` by the key contend for a slot
    contenders = [c for g in by_owner.values() for c in g[:cap] if not c.passed]
    # an unread contender that would displace a passed candidate of its owner is read first
    owners_full = Counter(owners)
    to_read = [c for c in contenders if owners_full[c.owner] >= cap]
    rest = [c for c in contenders if owners_full[c.owner] < cap]
    while rest and len(chosen) < target:
        open_ = [c for c in rest if domains[c.domain] < dom_cap and owners_full[c.owner] < cap]
        if not open_:
            break
        best = min(open_, key=lambda c: (not c.reserved, domains[c.domain], c.key()))
        rest.remove(best)
        chosen.append(best)
        to_read.append(best)
        domains[best.domain] += 1
        owners_full[best.owner] += 1
    return Selection(sorted(chosen, key=lambda c: c.repo.lower()),
                     sorted(dropped, key=lambda d: d[0].repo.lower()),
                     sorted(to_read, key=lambda c: c.repo.lower()))


def log_mismatches(sel: Selection, considered: list[Considered]) -> list[str]:
    """Rule rows of the considered logs (`owner_cap`, `quota_full`) the rule no longer agrees
    with, each naming its row and what to do."""
    why = {c.repo.lower(): reason.split(":")[0] for c, reason in sel.dropped}
    chosen = {c.repo.lower(): c for c in sel.chosen}
    out = []
    for row in sorted(considered, key=lambda r: (r.log, r.line, r.repo.lower(), r.reason)):
        if row.decision != "excluded" or row.reason not in RULE_REASONS:
            continue
        repo, says = row.repo.lower(), f"{row.log}:{row.line}: {row.repo} is logged `{row.reason}`"
        if repo in chosen:
            todo = ("restore its record and log it `ok`" if chosen[repo].passed
                    else "read it next and log the outcome")
            out.append(f"{says} but the rule selects it: {todo}")
        elif repo in why and why[repo] != row.reason:
            out.append(f"{says} but the rule drops it for `{why[repo]}`: correct the reason")
    return out


def scan_candidates(considered: list[Considered], mirror_root: Path,
                    domain_guess: dict[str, str]) -> tuple[list[list[str]], list[str]]:
    """Candidate-scan rows for every candidate excluded only by selection rules (and not
    otherwise), read from its snapshot under `mirror_root`; plus the repos without a snapshot."""
    from gpu2tpu.corpus.records import find_mirror
    from gpu2tpu.corpus.scanner import scan_path
    from gpu2tpu.corpus.source import SourceError

    reasons: dict[str, set[str]] = {}
    names: dict[str, str] = {}
    for row in considered:
        reasons.setdefault(row.repo.lower(), set()).add(
            row.reason if row.decision == "excluded" else "ok")
        names.setdefault(row.repo.lower(), row.repo)
    rows, missing = [], []
    for key in sorted(reasons):
        if not reasons[key] <= RULE_REASONS:
            continue
        repo = names[key]
        try:
            scan = scan_path(find_mirror(repo, mirror_root), repo=repo)
        except (FileNotFoundError, SourceError):
            missing.append(repo)
            continue
        domain = domain_of_guess(domain_guess.get(repo, ""))
        rows.append([repo, str(scan["commit"]), domain, str(scan["size"]["python_lines"]),
                     ",".join(scan["cuda_only"]["hard"]), str(scan["licence"]["spdx"])])
    return rows, missing


def merge_candidate_scans(on_file: list[dict[str, str]], rescanned: list[list[str]]
                          ) -> tuple[list[list[str]], list[str]]:
    """The rows to write: a rescanned row replaces its repo's row on file; a row on file that was
    not rescanned (no snapshot on this machine) stays as it is, so a partial set of snapshots
    never loses a candidate. Also the repos whose rows were kept from the file."""
    merged = {row[0].lower(): row for row in rescanned}
    kept = []
    for old in on_file:
        repo = old.get("repo") or ""
        if repo and repo.lower() not in merged:
            merged[repo.lower()] = [old.get(k) or "" for k in SCAN_COLUMNS]
            kept.append(repo)
    return [merged[k] for k in sorted(merged)], sorted(kept, key=str.lower)


def write_candidate_scans(curation_dir: Path, rows: list[list[str]]) -> Path:
    path = curation_dir / CANDIDATE_SCANS
    lines = ["\t".join(SCAN_COLUMNS)] + ["\t".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
