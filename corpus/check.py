"""`gpu2tpu corpus check`: refuse bad records; one message per problem (file: field: what)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from gpu2tpu.corpus import audits, corrections, data_facts, difficulty, problem, results
from gpu2tpu.corpus.environment import ENVIRONMENT, environment_problems
from gpu2tpu.corpus.records import (
    CORRECTED_KEY,
    PROJECTS_DIR,
    SITE_CORRECTIONS,
    Considered,
    Record,
    correction_problems,
    load_considered,
    load_records,
)

DOMAINS = ("vision", "vision-ssl", "vision-dense", "generative", "nlp", "rl", "graph", "sequence",
           "audio", "3d", "multimodal", "other")
SPLITS = ("main", "reference_only")
DECISIONS = ("included", "reference_only", "excluded")
REASONS = ("ok", "not_pytorch", "no_cuda", "no_training_entry", "no_licence", "no_paper",
           "too_large", "too_small", "duplicate", "owner_cap", "fetch_failed", "quota_full",
           "not_research")
OWNER_CAP = 4  # as corpus/curation/selection.yaml
MAX_DOMAIN_SHARE = 0.20
MIN_TIER3 = 15
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9_.\-]+$")
_ARXIV_ID = re.compile(r"arxiv\.org/(?:abs|pdf)/(\d{2})\d{2}\.\d{4,5}")
_CURATED_STR = ("paper_title", "task", "train_command", "licence_seen")


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def check_record(rec: Record) -> list[str]:
    """Problems of one record, each as 'file: field: what'."""
    where = _rel(rec.path)
    if rec.data is None:
        return [f"{where}: (file): {rec.error}"]
    d = rec.data
    out: list[str] = []

    def bad(field: str, what: str) -> None:
        out.append(f"{where}: {field}: {what}")

    if d.get("schema_version") != 1:
        bad("schema_version", f"must be 1, found {d.get('schema_version')!r}")
    repo = d.get("repo")
    if not isinstance(repo, str) or not _REPO.match(repo):
        bad("repo", f"must be owner/name, found {repo!r}")
    elif d.get("id") != repo.replace("/", "__"):
        bad("id", f"must be {repo.replace('/', '__')!r} (repo with / -> __), found {d.get('id')!r}")
    elif rec.path.stem != d["id"]:
        bad("id", f"file name must be {d['id']}.yaml")
    commit = d.get("commit")
    if not isinstance(commit, str) or not _HEX40.match(commit):
        bad("commit", f"must be 40 lowercase hex digits, found {commit!r}")
    if d.get("split") not in SPLITS:
        bad("split", f"must be one of {', '.join(SPLITS)}, found {d.get('split')!r}")
    cur = d.get("curated")
    if not isinstance(cur, dict):
        bad("curated", "missing or not a mapping")
        cur = {}
    _check_curated(cur, bad)
    scan = d.get("scan")
    if not isinstance(scan, dict):
        bad("scan", "missing: run `gpu2tpu corpus scan --record " + where + "`")
    else:
        _check_scan(scan, d, bad)
        _check_corrections(cur.get(SITE_CORRECTIONS), scan, where, bad)
    for field, what in environment_problems(d.get(ENVIRONMENT), d.get("commit")):
        bad(field, what)  # absent: the tree was not read here (corpus/environment.py)
    return out


def _check_corrections(corrections: Any, scan: dict[str, Any], where: str, bad: Any) -> None:
    """curated.site_corrections is well formed and the scan's evidence shows each one applied."""
    problems = correction_problems(corrections)
    for field, what in problems:
        bad(field, what)
    if problems:
        return
    rows = (scan.get("cuda_only") or {}).get("evidence") or []
    wanted = {(c["name"], c["where"]) for c in corrections or []}
    for e in rows:
        if isinstance(e, dict) and e.get(CORRECTED_KEY) and (e.get("name"), e.get("where")) \
                not in wanted:
            bad("scan.cuda_only.evidence", f"{e.get('name')} at {e.get('where')} is marked "
                f"corrected but curated.{SITE_CORRECTIONS} has no such site: rescan "
                f"(gpu2tpu corpus scan --record {where})")
    for i, c in enumerate(corrections or []):
        row = next((e for e in rows if isinstance(e, dict) and e.get("name") == c["name"]
                    and e.get("where") == c["where"]), None)
        if row is None or row.get("status") != c["status"] or not row.get(CORRECTED_KEY):
            bad(f"curated.{SITE_CORRECTIONS}[{i}]",
                f"{c['name']} at {c['where']} is not applied in scan.cuda_only.evidence: run "
                f"`gpu2tpu corpus scan --record {where}`")


# what a README writes for the reader to fill in: no shell runs a command that still holds one
PLACEHOLDER = re.compile(r"<[A-Za-z][\w \-]*>|\$\{?[A-Z][A-Z_]*\}?|\bYOUR_|PATH_TO|(?<![\w.])path/to/"
                         r"|\[\w+(?:\|\w+)+\]")


def _check_curated(cur: dict[str, Any], bad: Any) -> None:
    for key in _CURATED_STR:
        if not isinstance(cur.get(key), str) or not cur[key].strip():
            bad(f"curated.{key}", "missing or empty")
    command = cur.get("train_command")
    if isinstance(command, str) and (m := PLACEHOLDER.search(command)):
        bad("curated.train_command", f"holds the template placeholder {m[0]!r}: write the value "
            "the command runs with (a path under data/ for a dataset root) and say in "
            "hardness_notes that the curators adapted it")
    url = cur.get("paper_url")
    if not isinstance(url, str) or not re.match(r"^https?://\S+$", url):
        bad("curated.paper_url", f"must be an http(s) URL, found {url!r}")
    year = cur.get("paper_year")
    if not isinstance(year, int) or isinstance(year, bool) or not 1980 <= year <= 2027:
        bad("curated.paper_year", f"must be a year (integer), found {year!r}")
    elif isinstance(url, str) and (m := _ARXIV_ID.search(url)) and year != 2000 + int(m[1]):
        bad("curated.paper_year", f"{year} but the rule is the year of the first public version: "
                                  f"the arXiv id in paper_url says {2000 + int(m[1])}")
    if cur.get("domain") not in DOMAINS:
        bad("curated.domain", f"must be one of {', '.join(DOMAINS)}, found {cur.get('domain')!r}")
    for key in ("datasets", "hardness_notes"):
        val = cur.get(key)
        if not isinstance(val, list) or not all(isinstance(x, str) for x in val):
            bad(f"curated.{key}", "must be a list of strings")
    for field, what in results.row_problems(cur.get("reported_results")) \
            + results.command_problems(cur):
        bad(field, what)


def _check_scan(scan: dict[str, Any], d: dict[str, Any], bad: Any) -> None:
    if not scan.get("scanner_version"):
        bad("scan.scanner_version", "missing")
    if scan.get("commit") != d.get("commit"):
        bad("scan.commit", f"{scan.get('commit')!r} differs from the record's commit: rescan")
    if str(scan.get("repo", "")).lower() != str(d.get("repo", "")).lower():
        bad("scan.repo", f"{scan.get('repo')!r} differs from the record's repo")
    lic = scan.get("licence") or {}
    if not lic.get("spdx"):
        bad("scan.licence", "no licence file found in the snapshot")
    elif d.get("split") == "main" and not lic.get("permissive"):
        bad("split", f"is main but the licence ({lic['spdx']}) is not permissive: "
                     "use reference_only")
    for key in ("tier", "score", "bucket", "flags"):
        if key not in scan:
            bad(f"scan.{key}", "missing")
    if any(k not in scan for k in ("tier", "score", "bucket")):
        return
    try:
        want = difficulty.derive(scan)
    except (TypeError, ValueError, KeyError) as exc:
        bad("scan", f"counts unreadable: {exc}")
        return
    for key in ("tier", "score", "bucket"):
        if scan[key] != want[key]:
            bad(f"scan.{key}", f"{scan[key]!r} inconsistent with the scan's counts "
                               f"(expected {want[key]!r}): rescan")


def check_corpus(records: list[Record], considered: list[Considered],
                 expect_count: int | None = None) -> list[str]:
    """Cross-record problems: duplicates, owner cap, considered logs, count and balance."""
    out: list[str] = []
    good = [r for r in records if r.data is not None and isinstance(r.data.get("repo"), str)]
    by_repo: dict[str, list[Record]] = {}
    for r in good:
        assert r.data is not None
        by_repo.setdefault(r.data["repo"].lower(), []).append(r)
    for _repo, recs in sorted(by_repo.items()):
        if len(recs) > 1:
            names = ", ".join(_rel(r.path) for r in recs)
            out.append(f"{_rel(recs[1].path)}: repo: duplicate of another record ({names})")
    owners = Counter(repo.split("/")[0] for repo in by_repo)
    for owner, n in sorted(owners.items()):
        if n > OWNER_CAP:
            out.append(f"(corpus): repo: owner {owner} has {n} records (cap {OWNER_CAP})")
    logged: dict[str, list[Considered]] = {}
    for row in considered:
        where = f"{row.log}:{row.line}"
        logged.setdefault(row.repo.lower(), []).append(row)
        if row.decision not in DECISIONS:
            out.append(f"{where}: decision: {row.decision!r} is not one of {', '.join(DECISIONS)}")
        if row.reason not in REASONS:
            out.append(f"{where}: reason: {row.reason!r} is not one of the allowed reasons")
        elif row.decision == "excluded" and row.reason == "ok":
            out.append(f"{where}: reason: an excluded row needs the reason it was excluded")
        if row.decision == "excluded" and not row.detail:
            out.append(f"{where}: detail: an excluded row needs a detail")
    for repo, recs in sorted(by_repo.items()):
        rows = [r for r in logged.get(repo, []) if r.decision in ("included", "reference_only")]
        rec = recs[0]
        assert rec.data is not None
        if not rows:
            out.append(f"{_rel(rec.path)}: repo: not logged as included/reference_only in any "
                       "considered-*.tsv")
            continue
        want = "included" if rec.data.get("split") == "main" else "reference_only"
        if all(r.decision != want for r in rows):
            out.append(f"{_rel(rec.path)}: split: {rec.data.get('split')!r} but "
                       f"{rows[0].log}:{rows[0].line} says {rows[0].decision}")
    for repo, rows in sorted(logged.items()):
        for row in rows:
            if row.decision in ("included", "reference_only") and repo not in by_repo:
                out.append(f"{row.log}:{row.line}: repo: {row.repo} is {row.decision} but has "
                           "no record in corpus/projects")
    if expect_count is not None:
        out.extend(_balance(good, len(records), expect_count))
    return out


def _balance(good: list[Record], total: int, expect: int) -> list[str]:
    out = []
    if total != expect:
        out.append(f"(corpus): count: {total} records, expected {expect}")
    domains = Counter(str(((r.data or {}).get("curated") or {}).get("domain")) for r in good)
    for dom, n in sorted(domains.items()):
        if total and n / total > MAX_DOMAIN_SHARE:
            out.append(f"(corpus): curated.domain: {dom} holds {n}/{total} records "
                       f"(> {MAX_DOMAIN_SHARE:.0%})")
    tier3 = sum(1 for r in good if ((r.data or {}).get("scan") or {}).get("tier") == 3)
    if tier3 < MIN_TIER3:
        out.append(f"(corpus): scan.tier: {tier3} tier-3 records, need at least {MIN_TIER3}")
    return out


def run_check(projects_dir: Path, curation_dir: Path,
              expect_count: int | None = None) -> tuple[list[str], int]:
    """All problems and the number of records read."""
    records = load_records(projects_dir)
    considered, problems = load_considered(curation_dir)
    shipped = projects_dir.resolve() == PROJECTS_DIR.resolve()  # what the side files describe
    for rec in records:
        problems.extend(check_record(rec))
        problems.extend(_derived_problems(rec, catalog=shipped))
    problems.extend(check_corpus(records, considered, expect_count))
    problems.extend(audits.check_problems(curation_dir / "audits", projects_dir))
    if shipped:
        problems.extend(_side_file_problems(records))
    return problems, len(records)


def _derived_problems(rec: Record, catalog: bool) -> list[str]:
    """The fields the build derives: curated corrections of derived fields are well-formed and
    held, the problem statement builds and (for the shipped records) every dataset resolves in
    corpus/datasets.yaml."""
    if rec.data is None:
        return []
    out = [f"{_rel(rec.path)}: {field}: {what}" for field, what in
           corrections.problems((rec.data.get("curated") or {}).get(corrections.CORRECTIONS))
           + corrections.unapplied(rec.data)]
    try:
        problem.problem_statement(rec.data)
    except problem.ProblemError as e:
        out.append(f"{_rel(rec.path)}: problem statement: {e}")
    if catalog:
        try:
            data_facts.data_facts(rec.data)
        except data_facts.CatalogError as e:
            out.append(f"{_rel(rec.path)}: curated.datasets: {e}")
    return out


def _side_file_problems(records: list[Record]) -> list[str]:
    """corpus/datasets.yaml and curation/model-params.yaml load, and every stated count names a
    record of the corpus."""
    out = []
    try:
        data_facts.load_catalog()
    except data_facts.CatalogError as e:
        out.append(str(e))
    try:
        stated = data_facts.load_model_params()
    except data_facts.CatalogError as e:
        return [*out, str(e)]
    ids = {str(r.data.get("id")) for r in records if r.data}
    return out + [f"model-params.yaml entry '{rid}': no such record in corpus/projects"
                  for rid in sorted(set(stated) - ids)]
