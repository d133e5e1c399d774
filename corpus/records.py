"""Project records (`corpus/projects/<owner>__<name>.yaml`) and the curators' considered logs."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus import PACKAGE_DIR, corrections
from gpu2tpu.corpus.environment import ENVIRONMENT
from gpu2tpu.corpus.gpu_deps import STATUSES

PROJECTS_DIR = PACKAGE_DIR / "projects"
CURATION_DIR = PACKAGE_DIR / "curation"
CONSIDERED_COLUMNS = ("repo", "decision", "reason", "detail")

# libyaml's safe loader where PyYAML was built with it (the same objects, several times faster:
# a build reads every record more than once), else the pure-Python one
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TOP_KEY = re.compile(r"^[A-Za-z_][\w\-]*\s*:")

# curated.site_corrections: audited status corrections of the scan's CUDA-only use sites. Each
# item names a site (name, where = file:line, code = the line as the scan quotes it), the status
# the audit found and the reason with its evidence (`file:line`). The scanner applies them after
# every scan (apply_site_corrections), so a rescan keeps them; a corrected row carries
# `corrected: "scanner: <status it found> (curated.site_corrections[i])"`.
SITE_CORRECTIONS = "site_corrections"
CORRECTION_KEYS = ("name", "where", "code", "status", "reason", "via")
CORRECTED_KEY = "corrected"  # the evidence row's marker
CORRECTABLE = tuple(s for s in STATUSES if s != "declared")
_WHERE = re.compile(r"^[^\s:]+:[1-9]\d*$")
_EVIDENCE_REF = re.compile(r"[\w\-./]+\.\w+:\d+")


@dataclass
class Record:
    """One parsed record file (`data` is None when the YAML does not parse)."""

    path: Path
    data: dict[str, Any] | None
    error: str | None = None


def parse_yaml(text: str) -> Any:
    """`yaml.safe_load`, with libyaml when it is there (records and audits are read this way)."""
    return yaml.load(text, Loader=_SAFE_LOADER)  # a safe loader either way


def load_record(path: Path) -> Record:
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return Record(path, None, f"does not parse: {str(exc).splitlines()[0]}")
    if not isinstance(data, dict):
        return Record(path, None, "is not a YAML mapping")
    return Record(path, data)


def record_paths(projects_dir: Path = PROJECTS_DIR) -> list[Path]:
    return sorted(projects_dir.glob("*.yaml")) if projects_dir.is_dir() else []


def load_records(projects_dir: Path = PROJECTS_DIR) -> list[Record]:
    return [load_record(p) for p in record_paths(projects_dir)]


def write_scan(path: Path, scan: dict[str, Any]) -> None:
    """Replace (or append) the top-level `scan:` block; every other line stays byte-identical."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    in_scan = False
    for line in lines:
        if _TOP_KEY.match(line):
            in_scan = line.startswith("scan:") or line.startswith("scan :")
        elif line.startswith("---") or line.startswith("..."):
            in_scan = False
        if not in_scan:
            kept.append(line)
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    scan = corrections.apply(yaml.safe_load(text) or {}, "scan", scan)  # curated.corrections
    block = yaml.safe_dump({"scan": scan}, sort_keys=False, allow_unicode=True, width=100)
    new = body + block
    if yaml.safe_load(new).get("scan") != scan:  # never write a file that reads back differently
        raise ValueError(f"{path}: scan block does not round-trip")
    path.write_text(new, encoding="utf-8")


def write_environment(path: Path, env: dict[str, Any]) -> None:
    """Replace the top-level `environment:` block (corpus/environment.py's field), or put it just
    before `scan:` (write_scan appends scan last, so a rescan keeps the bytes), else at the end;
    every other line stays byte-identical: writing the same dict twice gives the same bytes."""
    kept: list[str] = []
    inside = False
    text = path.read_text(encoding="utf-8")
    env = corrections.apply(yaml.safe_load(text) or {}, ENVIRONMENT, env)  # curated.corrections
    for line in text.splitlines(keepends=True):
        if _TOP_KEY.match(line):
            inside = re.match(rf"^{ENVIRONMENT}\s*:", line) is not None
        elif line.startswith(("---", "...")):
            inside = False
        if not inside:
            kept.append(line)
    if kept and not kept[-1].endswith("\n"):
        kept[-1] += "\n"
    at = next((i for i, line in enumerate(kept) if re.match(r"^scan\s*:", line)), len(kept))
    block = yaml.safe_dump({ENVIRONMENT: env}, sort_keys=False, allow_unicode=True, width=100)
    new = "".join(kept[:at]) + block + "".join(kept[at:])
    if yaml.safe_load(new).get(ENVIRONMENT) != env:
        raise ValueError(f"{path}: {ENVIRONMENT} block does not round-trip; report the record")
    path.write_text(new, encoding="utf-8")


class CorrectionError(ValueError):
    """A curated site correction that does not fit the scan or the snapshot."""


def correction_problems(value: Any) -> list[tuple[str, str]]:
    """(field, what) for each problem of a `curated.site_corrections` value (absent: none)."""
    field = f"curated.{SITE_CORRECTIONS}"
    if value is None:
        return []
    if not isinstance(value, list):
        return [(field, "must be a list of {name, where, code, status, reason[, via]}")]
    out: list[tuple[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    for i, item in enumerate(value):
        f = f"{field}[{i}]"
        if not isinstance(item, dict):
            out.append((f, "must be a mapping {name, where, code, status, reason[, via]}"))
            continue
        if extra := sorted(set(item) - set(CORRECTION_KEYS)):
            out.append((f, f"unknown key(s) {', '.join(map(str, extra))}: allowed are "
                           f"{', '.join(CORRECTION_KEYS)}"))
        for key in ("name", "where", "code", "reason"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                out.append((f"{f}.{key}", "missing or empty"))
        if "via" in item and (not isinstance(item["via"], str) or not item["via"].strip()):
            out.append((f"{f}.via", "must be a non-empty string when given"))
        if item.get("status") not in CORRECTABLE:
            out.append((f"{f}.status", f"must be one of {', '.join(CORRECTABLE)}, found "
                                       f"{item.get('status')!r}"))
        where = item.get("where")
        if isinstance(where, str) and where and not _WHERE.match(where):
            out.append((f"{f}.where", f"must be file:line as the scan's evidence, found {where!r}"))
        reason = item.get("reason")
        if isinstance(reason, str) and reason.strip() and not _EVIDENCE_REF.search(reason):
            out.append((f"{f}.reason", "must cite its evidence as file:line (e.g. "
                                       "scripts/train.sh:3)"))
        site = (str(item.get("name")), str(where))
        if site in seen:
            out.append((f, f"corrects the same site as [{seen[site]}] ({site[0]} at {site[1]})"))
        seen.setdefault(site, i)
    return out


def apply_site_corrections(evidence: list[dict[str, Any]], corrections: Any, repo: str,
                           texts: dict[str, str]) -> list[dict[str, Any]]:
    """The scan's evidence with the record's curated site corrections applied.

    A correction replaces the status (and `via`, which only a hard row keeps unless the
    correction gives one) of the scan's row with the same name and where, whose code must match.
    A site in a file the scanner does not parse for imports (a launcher line in a shell script)
    is added when `texts` (path -> text of the snapshot's files) holds `code` at that line. A
    correction whose site the scan no longer reports raises CorrectionError naming the record,
    the site and what to do. Rows are ordered as the scanner orders them (hard first).
    """
    if problems := correction_problems(corrections):
        raise CorrectionError(f"{repo}: " + "; ".join(f"{f}: {w}" for f, w in problems)
                              + ": fix the record's curated section (gpu2tpu corpus check)")
    if not corrections:
        return evidence
    out = [dict(e) for e in evidence]
    for i, c in enumerate(corrections):
        ref = f"curated.{SITE_CORRECTIONS}[{i}]"
        site = f"{c['name']} at {c['where']} ({c['code']!r})"
        todo = (f"re-read the site at the pinned commit, then update {ref} to the line the scan "
                "reports or remove it (and rescan)")
        row = next((e for e in out if e["name"] == c["name"] and e["where"] == c["where"]), None)
        if row is not None:
            if row["code"].strip() != c["code"].strip():
                raise CorrectionError(f"{repo}: {ref}: the scan's {c['name']} site at "
                                      f"{c['where']} now reads {row['code']!r}, not "
                                      f"{c['code']!r}: {todo}")
            found = row["status"]
        else:
            path, _, line = c["where"].rpartition(":")
            lines = texts.get(path, "").splitlines()
            n = int(line)
            if path.endswith(".py") or not 0 < n <= len(lines) or (
                    lines[n - 1].strip() != c["code"].strip()):
                raise CorrectionError(f"{repo}: {ref}: the scan reports no site {site}: {todo}")
            row = {"name": c["name"], "status": "", "where": c["where"], "code": c["code"]}
            out.append(row)
            found = "none"
        row["status"] = c["status"]
        via = c.get("via") or (row.get("via") if c["status"] == "hard" else None)
        row.pop("via", None)
        if via:
            row["via"] = via
        row[CORRECTED_KEY] = f"scanner: {found} ({ref})"
    rank = {s: i for i, s in enumerate(STATUSES)}
    out.sort(key=lambda e: (rank[e["status"]], e["name"], e["where"]))
    return out


@dataclass
class Considered:
    """One row of a considered log."""

    log: str  # file name, e.g. considered-A.tsv
    line: int
    repo: str
    decision: str
    reason: str
    detail: str


def load_considered(curation_dir: Path = CURATION_DIR) -> tuple[list[Considered], list[str]]:
    """All rows of `considered-*.tsv`, plus problems found while reading them."""
    rows: list[Considered] = []
    problems: list[str] = []
    for path in sorted(curation_dir.glob("considered-*.tsv")) if curation_dir.is_dir() else []:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None)
            if header is None or tuple(h.strip() for h in header[:4]) != CONSIDERED_COLUMNS:
                problems.append(f"{path.name}:1: header must be {' '.join(CONSIDERED_COLUMNS)}")
                continue
            for lineno, cells in enumerate(reader, start=2):
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) < 3:
                    problems.append(f"{path.name}:{lineno}: expected 4 tab-separated columns")
                    continue
                cells = [c.strip() for c in cells] + [""] * (4 - len(cells))
                rows.append(Considered(path.name, lineno, *cells[:4]))
    return rows, problems


def find_mirror(repo: str, mirror_root: Path) -> Path:
    """The folder `fetch` made for owner/name (`<owner>+<name>`), matched case-insensitively."""
    want = repo.replace("/", "+")
    exact = mirror_root / want
    if exact.is_dir():
        return exact
    if mirror_root.is_dir():
        for cand in mirror_root.iterdir():
            if cand.name.lower() == want.lower() and cand.is_dir():
                return cand
    raise FileNotFoundError(f"no snapshot of {repo} under {mirror_root} (fetch github:{repo})")
