"""`gpu2tpu corpus ...`: scan, check, build, stats, download, publish."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu2tpu.corpus import DATA_DIR
from gpu2tpu.tasks import TASKS_DIR

if TYPE_CHECKING:
    from gpu2tpu.corpus.selection import Selection

# where `fetch`-style snapshots live (<owner>+<name>/); set GPU2TPU_MIRROR_ROOT or --mirror-root
DEFAULT_MIRROR_ROOT = Path(os.environ.get("GPU2TPU_MIRROR_ROOT")
                           or Path.home() / ".cache" / "gpu2tpu" / "mirror")

SELECT_HELP = """\
Rank every eligible candidate (records, and candidates in curation/candidate-scans.tsv that did
not fail a read) by the rule in corpus/selection.py (its docstring is the rule; parameters:
curation/selection.yaml) and print, one tab-separated line each, what to change so that the
records are exactly what the rule selects:

  rule selects N of M eligible (...)   first line: the rule's parameters
  drop    REPO  WHY  TODO   a passed candidate the rule leaves out (owner_cap or quota_full,
                            naming what ranks higher); a record: remove it and log it;
                            not a record: nothing to do (shown, not counted against 0)
  restore REPO  DOMAIN  LINES  TODO   a candidate that passed its read and is selected but is
                            not a record: restore its record and log it `ok`
  read    REPO  DOMAIN  LINES  TODO   an unread candidate: read (curate) it next, log the
                            outcome, run select again
  log     FILE:LINE: ...    a considered-log row the rule no longer agrees with, and the fix
  tier3   ...               the selection holds fewer tier-3 candidates than tier3_min
  task    REPO  ...         an upstream task in selection.yaml that is not eligible
  summary ...               last line: selected count, tier-3 count vs tier3_min, records to
                            add (restore), remove (drop), read; a fixed point or not, and why"""
SELECT_EXIT = """\
exit status: 0 when the records are a fixed point of the rule (nothing to drop, restore or
read, the tier-3 floor met, every task selected) and the logs agree; 1 otherwise (the summary
line and stderr say why); 2 when an input cannot be read (the error says which and how)."""


def _user_error(msg: str) -> Exception:
    from gpu2tpu.errors import UserError

    return UserError(msg)


def register(sub: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the `gpu2tpu` parser."""
    from gpu2tpu.corpus.records import CURATION_DIR, PROJECTS_DIR

    corpus = sub.add_parser("corpus", help="the project corpus: scan, check, build, download",
                            description="Build, inspect and fetch the gpu2tpu project corpus.")
    csub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION")
    corpus.set_defaults(func=lambda a: corpus.print_help() or 2)

    p = csub.add_parser("scan", help="statically profile a repository (never runs its code)",
                        description="Scan a checkout or git directory at a commit and print its "
                        "record, or fill the `scan:` section of project records.")
    p.add_argument("path", nargs="?", type=Path,
                   help="git directory (bare, or fetch's <owner>+<name> folder) or checkout, read "
                   "at a commit (uncommitted changes are ignored); a folder without git is read "
                   "from disk")
    p.add_argument("--commit", help="commit to read (default: HEAD of a git directory)")
    p.add_argument("--json", action="store_true", help="print JSON instead of YAML")
    p.add_argument("--record", type=Path, help="scan this record's repo at its commit and write "
                   "its scan: section in place")
    p.add_argument("--all", action="store_true", help="scan every record whose scan is missing, "
                   "stale (older scanner) or for another commit")
    p.add_argument("--force", action="store_true", help="with --all: rescan every record")
    p.add_argument("--sites", action="store_true", help="with --record: print each hazard site "
                   "behind scan.training_path_counts (construct, file:line, code) and write "
                   "nothing")
    p.add_argument("--mirror-root", type=Path, default=DEFAULT_MIRROR_ROOT,
                   help="where fetch keeps snapshots as <owner>+<name>/ (default %(default)s)")
    p.add_argument("--projects-dir", type=Path, default=PROJECTS_DIR, help="records folder")
    p.set_defaults(func=_scan)

    p = csub.add_parser("check", help="validate every project record and the considered logs",
                        description="Print one line per problem (file: field: what); exit 1 if "
                        "any. With --expect-count also checks the count, the 20% domain cap and "
                        "at least 15 tier-3 records.")
    p.add_argument("dir", nargs="?", type=Path, default=PROJECTS_DIR, help="records folder")
    p.add_argument("--curation-dir", type=Path, help="considered-*.tsv folder "
                   "(default: DIR/../curation)")
    p.add_argument("--expect-count", type=int, help="exact number of records required")
    p.set_defaults(func=_check)

    p = csub.add_parser("build", help="compile records and tasks into the dataset directory",
                        description="Write parquet files, the dataset card, REVISION and "
                        "considered.tsv (deterministic: same inputs, same bytes).")
    p.add_argument("--out", type=Path, default=DATA_DIR, help="output folder (default: the "
                   "package's embedded copy)")
    p.add_argument("--projects-dir", type=Path, default=PROJECTS_DIR, help="records folder")
    p.add_argument("--curation-dir", type=Path, default=CURATION_DIR,
                   help="considered-*.tsv folder")
    p.add_argument("--task-dir", dest="tasks_dir", type=Path, default=TASKS_DIR,
                   help="the folder of task folders (<task_id>/task.yaml)")
    p.add_argument("--tasks-dir", dest="tasks_dir", type=Path, help=argparse.SUPPRESS)  # old spelling
    p.add_argument("--allow-invalid", action="store_true",
                   help="build even when `corpus check` reports problems")
    p.set_defaults(func=_build)

    p = csub.add_parser("select", help="apply the selection rule to the records and the logs",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description=SELECT_HELP, epilog=SELECT_EXIT)
    p.add_argument("--projects-dir", type=Path, default=PROJECTS_DIR, help="records folder")
    p.add_argument("--curation-dir", type=Path, default=CURATION_DIR,
                   help="considered logs, selection.yaml, candidate-scans.tsv")
    p.add_argument("--scan-candidates", type=Path, metavar="CANDIDATES_TSV",
                   help="first rescan the candidates excluded only by selection rules from their "
                   "snapshots (domain guesses from this candidates.tsv) into candidate-scans.tsv; "
                   "rows of candidates without a snapshot here stay as they are")
    p.add_argument("--mirror-root", type=Path, default=DEFAULT_MIRROR_ROOT,
                   help="snapshots as <owner>+<name>/ (default %(default)s)")
    p.set_defaults(func=_select)

    p = csub.add_parser("stats", help="print the domain x difficulty table and tier counts",
                        description="Count records per domain and difficulty bucket, and per "
                        "tier and split (unscanned records under '?').")
    p.add_argument("--projects-dir", type=Path, default=PROJECTS_DIR, help="records folder")
    p.set_defaults(func=_stats)

    p = csub.add_parser("download", help="fetch the dataset from the Hugging Face Hub "
                        "(falls back to the embedded copy when offline)",
                        description="Download the dataset with huggingface_hub. When the Hub "
                        "cannot be reached, say so and use the copy embedded in the package.")
    p.add_argument("--repo-id", default="gpu2tpu/corpus", help="dataset repo (default "
                   "%(default)s)")
    p.add_argument("--revision", help="branch, tag or commit on the Hub")
    p.add_argument("--to", type=Path, help="copy the dataset into this folder")
    p.add_argument("--endpoint", help="Hub URL (default: $HF_ENDPOINT or huggingface.co)")
    p.add_argument("--token", help="Hub token (default: the huggingface_hub login)")
    p.add_argument("--cache-dir", type=Path, help="huggingface_hub cache (default: HF_HOME's)")
    p.set_defaults(func=_download)

    p = csub.add_parser("publish", help="create the Hub dataset repo and upload data, then card",
                        description="Create the dataset repo if needed, upload the built data "
                        "(parquet, REVISION, considered.tsv, chart), then the card README.md.")
    p.add_argument("--repo-id", required=True, help="owner/name of the dataset repo")
    p.add_argument("--data-dir", type=Path, default=DATA_DIR, help="built dataset folder")
    p.add_argument("--dry-run", action="store_true", help="only list what would be uploaded")
    p.add_argument("--token", help="Hub token with write access")
    p.add_argument("--private", action="store_true", help="create the repo private")
    p.set_defaults(func=_publish)
    from gpu2tpu.corpus.environment_cli import add_parser as add_environment
    from gpu2tpu.corpus.problem import register as register_problem

    add_environment(csub, DEFAULT_MIRROR_ROOT)  # `corpus environment`
    register_problem(csub)  # `corpus problem`
    from gpu2tpu.corpus.authoring_cli import register_authoring

    register_authoring(sub)  # `tasks pin`, `tasks new`: a task from a corpus record

def _scan(args: argparse.Namespace) -> int:
    import yaml

    from gpu2tpu.corpus.scanner import scan_path
    from gpu2tpu.corpus.source import SourceError

    chosen = sum(bool(x) for x in (args.path, args.record, args.all))
    if chosen != 1:
        raise _user_error("give exactly one of PATH, --record FILE or --all")
    if args.path:
        try:
            scan = scan_path(args.path, args.commit)
        except SourceError as exc:
            raise _user_error(str(exc)) from exc
        if args.json:
            print(json.dumps(scan, indent=2))
        else:
            print(yaml.safe_dump(scan, sort_keys=False), end="")
        return 0
    if args.sites and not args.record:
        raise _user_error("--sites lists one record's sites: give --record FILE with it")
    if args.record:
        try:
            line = _scan_record(args.record, args.mirror_root, sites=args.sites)
        except (SourceError, FileNotFoundError, ValueError) as exc:
            raise _user_error(f"{args.record}: {exc}") from exc
        print(line)
        return 0
    return _scan_all(args.projects_dir, args.mirror_root, args.force)


def _scan_record(path: Path, mirror_root: Path, sites: bool = False) -> str:
    """Rescan one record and write its scan: section (with `sites`: write nothing, return the
    training-path hazard sites, one per line)."""
    from gpu2tpu.corpus.records import find_mirror, load_record, write_scan
    from gpu2tpu.corpus.scanner import scan_path

    rec = load_record(path)
    if rec.data is None:
        raise ValueError(str(rec.error))
    repo, commit = rec.data.get("repo"), rec.data.get("commit")
    if not isinstance(repo, str) or not isinstance(commit, str):
        raise ValueError("record needs repo and commit")
    t0 = time.perf_counter()
    curated = rec.data.get("curated") if isinstance(rec.data.get("curated"), dict) else {}
    command = curated.get("train_command")
    scan = scan_path(find_mirror(repo, mirror_root), commit, repo=repo,
                     train_command=command if isinstance(command, str) else None,
                     curated=curated, keep_sites=sites)
    if sites:
        lines = [f"{s['construct']}\t{s['file']}:{s['line']}\t{s['code']}"
                 for s in scan["training_path_sites"]] or ["no hazard on the training path"]
        lines += [f"curated.corrections sets {c.get('field')} to {c.get('value')}: "
                  f"{c.get('reason')}" for c in curated.get("corrections") or []
                  if str(c.get("field", "")).startswith("scan.training_path_counts")]
        return "\n".join(lines)
    write_scan(path, scan)
    return (f"{repo}: tier {scan['tier']} score {scan['score']} {scan['bucket']} "
            f"licence {scan['licence']['spdx']} ({time.perf_counter() - t0:.2f}s)")


def _needs_scan(data: dict, version: str) -> bool:
    scan = data.get("scan")
    return (not isinstance(scan, dict) or scan.get("scanner_version") != version
            or scan.get("commit") != data.get("commit"))


def _scan_all(projects_dir: Path, mirror_root: Path, force: bool) -> int:
    from gpu2tpu.corpus.records import load_records
    from gpu2tpu.corpus.scanner import SCANNER_VERSION
    from gpu2tpu.corpus.source import SourceError

    records = load_records(projects_dir)
    todo = [r for r in records if r.data is None or force or _needs_scan(r.data, SCANNER_VERSION)]
    print(f"{len(todo)} of {len(records)} records to scan", flush=True)
    t0 = time.perf_counter()
    failed = 0
    for i, rec in enumerate(todo, start=1):
        try:
            line = _scan_record(rec.path, mirror_root)
        except (SourceError, FileNotFoundError, ValueError, OSError) as exc:
            failed += 1
            line = f"{rec.path.name}: FAILED: {exc}"
        print(f"[{i}/{len(todo)}] {line}", flush=True)
    total = time.perf_counter() - t0
    print(f"scanned {len(todo) - failed} record(s) in {total:.1f}s, {failed} failed")
    return 1 if failed else 0


def _check(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.check import run_check

    curation = args.curation_dir or args.dir.resolve().parent / "curation"
    problems, n = run_check(args.dir, curation, args.expect_count)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} problem(s) in {n} record(s)", file=sys.stderr)
        return 1
    print(f"ok: {n} record(s)")
    return 0


def _build(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.build import BuildError, build

    try:
        res = build(args.out, args.projects_dir, args.curation_dir, args.tasks_dir,
                    allow_invalid=args.allow_invalid)
    except BuildError as exc:
        raise _user_error(str(exc)) from exc
    rows = ", ".join(f"{k}: {v}" for k, v in res.counts.items())
    print(f"built {res.out_dir} revision {res.revision} ({rows})")
    if res.problems:
        print(f"warning: built despite {len(res.problems)} problem(s) (--allow-invalid)",
              file=sys.stderr)
    return 0


def _select(args: argparse.Namespace) -> int:
    import csv

    from gpu2tpu.corpus import selection
    from gpu2tpu.corpus.records import load_considered, load_records

    considered, problems = load_considered(args.curation_dir)
    if problems:
        raise _user_error("; ".join(problems) + " (fix the considered logs, then run select again)")
    if args.scan_candidates:
        with args.scan_candidates.open(encoding="utf-8", newline="") as fh:
            guess = {r["repo"]: r.get("domain_guess", "") for r in
                     csv.DictReader(fh, delimiter="\t")}
        rows, missing = selection.scan_candidates(considered, args.mirror_root, guess)
        merged, kept = selection.merge_candidate_scans(
            selection.load_candidate_scans(args.curation_dir), rows)
        path = selection.write_candidate_scans(args.curation_dir, merged)
        lost = sorted(set(missing) - set(kept), key=str.lower)
        print(f"wrote {path} ({len(rows)} rescanned from {args.mirror_root}, {len(kept)} kept "
              f"from the file without a snapshot; {len(lost)} with neither a snapshot nor a row: "
              f"{', '.join(lost) or '-'}{'; fetch those, then run again' if lost else ''})")
    try:
        rules = selection.load_rules(args.curation_dir)
    except ValueError as exc:
        raise _user_error(str(exc)) from exc
    loaded = load_records(args.projects_dir)
    broken = [f"{r.path.name} ({r.error})" for r in loaded if r.data is None]
    if broken:
        raise _user_error(f"records that do not parse: {'; '.join(broken)}; fix them (see "
                          "`gpu2tpu corpus check`), then run select again")
    records = [r.data for r in loaded if r.data is not None]
    cands = selection.eligible(records, considered,
                               selection.load_candidate_scans(args.curation_dir),
                               set(rules["tasks"]))
    sel = selection.select(cands, rules)
    lines, reasons = _select_report(sel, selection.log_mismatches(sel, considered), rules,
                                    len(cands))
    print("\n".join(lines))
    if reasons:
        print(f"gpu2tpu corpus select: not a fixed point: {', '.join(reasons)}; act on the lines "
              "above, then run select again", file=sys.stderr)
        return 1
    return 0


def _select_report(sel: Selection, mismatches: list[str], rules: dict[str, Any],
                   n_eligible: int) -> tuple[list[str], list[str]]:
    """The lines `corpus select` prints (SELECT_HELP) and the reasons it is not a fixed point."""
    target, cap, floor = rules["target_count"], rules["owner_cap"], int(rules.get("tier3_min", 0))
    dom_cap = int(float(rules["domain_cap_share"]) * int(target))
    out = [f"rule selects {len(sel.chosen)} of {n_eligible} eligible (target {target}, owner cap "
           f"{cap}, domain cap {dom_cap}, tier3_min {floor})"]
    remove = [c for c, _ in sel.dropped if c.is_record]
    for c, why in sel.dropped:
        todo = (f"remove its record and log it `excluded {why.split(':')[0]}` with 'was a record' "
                "in the detail" if c.is_record else "not a record: nothing to do")
        out.append(f"drop\t{c.repo}\t{why}\t{todo}")
    for c in sel.restore:
        out.append(f"restore\t{c.repo}\t{c.domain}\t{c.python_lines} lines\tit passed its read "
                   "and the rule selects it: restore its record and log it `ok`")
    chosen = {c.repo.lower() for c in sel.chosen}
    for c in sel.to_read:
        todo = ("selected for a free slot" if c.repo.lower() in chosen else
                f"ranks within {c.owner}'s first {cap}: it displaces one only if it passes")
        out.append(f"read\t{c.repo}\t{c.domain}\t{c.python_lines} lines\t{todo}; read it next "
                   "and log the outcome")
    out += [f"log\t{m}" for m in mismatches]
    hard = sum(c.hard for c in sel.chosen)
    if sel.tier3_short:
        out.append(f"tier3\t{sel.tier3_short} short: {hard} tier-3 selected, tier3_min {floor}; "
                   "even the reserve cannot fill the floor (too few tier-3 candidates are eligible "
                   "within the owner, domain and target caps): find and read more candidates with "
                   "a hard CUDA-only dependency (INCLUSION.md), or lower tier3_min in "
                   "selection.yaml")
    missing = sorted(set(rules["tasks"]) - {c.repo for c in sel.chosen}, key=str.lower)
    out += [f"task\t{t}\tlisted in selection.yaml `tasks` but neither a record nor an eligible "
            "candidate: add its record or take it off `tasks`" for t in missing]
    counts = [(len(remove), "record(s) to drop"), (len(sel.restore), "to restore"),
              (len(sel.to_read), "to read"), (len(mismatches), "log row(s) to fix"),
              (sel.tier3_short, "tier-3 short"), (len(missing), "task(s) not selected")]
    reasons = [f"{n} {what}" for n, what in counts if n]
    state = ("a fixed point, the logs agree" if not reasons
             else f"not a fixed point: {', '.join(reasons)}")
    out.append(f"summary\t{len(sel.chosen)} selected (target {target}), {hard} tier-3 (tier3_min "
               f"{floor}), records to add {len(sel.restore)}, remove {len(remove)}, read "
               f"{len(sel.to_read)}: {state}")
    return out, reasons


def _stats(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.records import load_records
    from gpu2tpu.corpus.schema import project_row
    from gpu2tpu.corpus.stats import text_report

    rows = [project_row(r.data) for r in load_records(args.projects_dir) if r.data is not None]
    print(f"{len(rows)} project record(s)")
    print(text_report(rows))
    return 0


def _download(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.hub import HubError, download

    try:
        path, from_hub = download(args.repo_id, args.revision, args.to, args.endpoint, args.token,
                                  args.cache_dir)
    except HubError as exc:
        raise _user_error(str(exc)) from exc
    print(f"{'downloaded' if from_hub else 'embedded copy'}: {path}")
    return 0


def _publish(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.hub import HubError, publish

    try:
        files = publish(args.repo_id, args.data_dir, token=args.token, private=args.private,
                        dry_run=args.dry_run)
    except HubError as exc:
        raise _user_error(str(exc)) from exc
    verb = "would upload" if args.dry_run else "uploaded"
    print(f"{verb} to datasets/{args.repo_id}, in this order:")
    for f in files:
        print(f"  {f}")
    return 0
