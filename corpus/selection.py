"""The selection rule: which candidates fill the corpus, computed from the logs, never by hand.

Inputs: the records (read candidates that passed criteria 1-7), the considered logs, the
candidate scans (`curation/candidate-scans.tsv`: facts the scanner read from candidates not yet
curated) and the rule's parameters (`curation/selection.yaml`). The rule, in order:

1. Eligible: every record, and every scanned candidate whose only exclusions are `owner_cap` or
   `quota_full` (rules of selection, not failures of a criterion).
2. Preference (one key, everywhere): upstream tasks first; then a permissive licence (the `main`
   split, whose code tasks can ship); then no hard CUDA-only dependency on the training path;
   then fewer Python lines; then the repo name. Small canonical projects come
   before large ones of the same owner; a candidate never read is ranked by its scan.
3. Owner cap: each owner keeps its first `owner_cap` eligible candidates by that key.
4. Replace: records within the owner cap keep their slots (they were read and passed); a record
   the cap drops is replaced by the best-ranked candidate of the same owner not yet read.
5. Fill: slots still free up to `target_count` go to candidates not yet read, by (domain with
   the fewest selected so far, key), never past `domain_cap_share` of `target_count` per domain.
A selected candidate that is not yet a record must be read (curated) next; if it fails a
criterion it is logged with that reason and the rule is run again.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus.patterns import PERMISSIVE_SPDX
from gpu2tpu.corpus.records import Considered

SELECTION_RULES = "selection.yaml"
CANDIDATE_SCANS = "candidate-scans.tsv"
SCAN_COLUMNS = ("repo", "commit", "domain", "python_lines", "hard_cuda_deps", "licence")
RULE_REASONS = {"owner_cap", "quota_full"}
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
    hard: bool
    permissive: bool
    is_task: bool
    is_record: bool

    @property
    def owner(self) -> str:
        return self.repo.split("/")[0].lower()

    def key(self) -> tuple[bool, bool, bool, int, str]:
        return (not self.is_task, not self.permissive, self.hard, self.python_lines,
                self.repo.lower())


@dataclass
class Selection:
    chosen: list[Candidate]
    dropped: list[tuple[Candidate, str]]  # records the rule leaves out, with why

    @property
    def to_read(self) -> list[Candidate]:
        return [c for c in self.chosen if not c.is_record]


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


def eligible(records: list[dict[str, Any]], considered: list[Considered],
             scans: list[dict[str, str]], tasks: set[str]) -> list[Candidate]:
    """Records plus scanned candidates excluded only by selection rules."""
    reasons: dict[str, set[str]] = {}
    for row in considered:
        if row.decision == "excluded":
            reasons.setdefault(row.repo.lower(), set()).add(row.reason)
    out: dict[str, Candidate] = {}
    for rec in records:
        scan, cur = rec.get("scan") or {}, rec.get("curated") or {}
        repo = str(rec["repo"])
        out[repo.lower()] = Candidate(repo, str(cur.get("domain")),
                                      int((scan.get("size") or {}).get("python_lines", 0)),
                                      bool((scan.get("cuda_only") or {}).get("hard")),
                                      rec.get("split") == "main", repo in tasks, True)
    for row in scans:
        repo = row["repo"]
        why = reasons.get(repo.lower(), set())
        if repo.lower() in out or not why or not why <= RULE_REASONS:
            continue
        out[repo.lower()] = Candidate(repo, row["domain"], int(row["python_lines"]),
                                      bool(row["hard_cuda_deps"]),
                                      row["licence"] in PERMISSIVE_SPDX, repo in tasks, False)
    return sorted(out.values(), key=Candidate.key)


def select(cands: list[Candidate], rules: dict[str, Any]) -> Selection:
    cap, target = int(rules["owner_cap"]), int(rules["target_count"])
    dom_cap = int(float(rules["domain_cap_share"]) * target)
    per_owner: Counter[str] = Counter()
    capped: list[Candidate] = []
    dropped: list[tuple[Candidate, str]] = []
    for c in cands:  # already in key order
        if per_owner[c.owner] < cap:
            per_owner[c.owner] += 1
            capped.append(c)
        elif c.is_record:
            dropped.append((c, f"owner_cap: {c.owner} keeps its first {cap} by the key"))
    # records within the owner cap keep their slots (they were read and passed); an owner's
    # dropped records are replaced by its own better-ranked candidates not yet read; slots still
    # free go to the remaining candidates not yet read
    chosen = [c for c in capped if c.is_record]
    lost = Counter(c.owner for c, _ in dropped)
    rest = []
    for c in capped:
        if not c.is_record and lost[c.owner] > 0:
            lost[c.owner] -= 1
            chosen.append(c)
        elif not c.is_record:
            rest.append(c)
    domains = Counter(c.domain for c in chosen)
    while rest and len(chosen) < target:
        open_ = [c for c in rest if domains[c.domain] < dom_cap]
        if not open_:
            break
        best = min(open_, key=lambda c: (domains[c.domain], c.key()))
        rest.remove(best)
        chosen.append(best)
        domains[best.domain] += 1
    return Selection(sorted(chosen, key=lambda c: c.repo.lower()), dropped)


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


def write_candidate_scans(curation_dir: Path, rows: list[list[str]]) -> Path:
    path = curation_dir / CANDIDATE_SCANS
    lines = ["\t".join(SCAN_COLUMNS)] + ["\t".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
