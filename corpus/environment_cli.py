"""`gpu2tpu corpus environment`: fill records' `environment:` field from their pinned trees."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from gpu2tpu.corpus import install_scope
from gpu2tpu.corpus.environment import ENVIRONMENT, extract, open_tree, summary
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record, load_records, write_environment
from gpu2tpu.corpus.source import SourceError, open_source
from gpu2tpu.tasks.sources import SOURCES_ENV, sources_dir

HELP = f"""\
Read what a project's own files state about its environment (Python, torch and CUDA versions,
install commands, heavy or obsolete stacks; each with file:line) and print it (PATH), or write
the `{ENVIRONMENT}:` field of records whose pinned tree is here: the <id>.tar.gz snapshot in
--sources, else the fetch mirror <owner>+<name> under --mirror-root, read at the record's commit.
A snapshot is read only once each file matches the commit's tree (its <id>.tree.tsv hashing to
the tree id the record's task pins, or the mirror's): one that does not is refused (FAILED).
Records without a tree are left without the field (reported as `no tree`). Deterministic: the
same trees give the same bytes."""


def add_parser(csub: argparse._SubParsersAction, mirror_default: Path) -> None:
    p = csub.add_parser("environment", help="the Python/torch/CUDA versions and install commands "
                        "a project's files state", description=HELP)
    p.add_argument("path", nargs="?", type=Path, help="a checkout, git directory or folder: "
                   "print its environment (YAML, or --json)")
    p.add_argument("--commit", help="with PATH: commit to read (default HEAD of a git directory)")
    p.add_argument("--json", action="store_true", help="with PATH: print JSON")
    p.add_argument("--record", type=Path, help="fill this record's field")
    p.add_argument("--all", action="store_true", help="fill every record whose tree is here")
    p.add_argument("--mirror-root", type=Path, default=mirror_default,
                   help="fetch snapshots as <owner>+<name>/ (default %(default)s)")
    p.add_argument("--sources", type=Path, help="folder of <id>.tar.gz snapshots (default "
                   f"${SOURCES_ENV})")
    p.add_argument("--projects-dir", type=Path, default=PROJECTS_DIR, help="records folder")
    p.set_defaults(func=run)


def _error(msg: str) -> Exception:
    from gpu2tpu.errors import UserError

    return UserError(msg)


def run(args: argparse.Namespace) -> int:
    if sum(bool(x) for x in (args.path, args.record, args.all)) != 1:
        raise _error("give exactly one of PATH, --record FILE or --all")
    if args.path:
        try:
            source = open_source(args.path, args.commit)
        except SourceError as exc:
            raise _error(f"{exc}: give a checkout, a git directory or a folder") from exc
        try:
            env = extract(source, source.commit or "", "path")
        finally:
            source.close()
        print(json.dumps(env, indent=2) if args.json else
              yaml.safe_dump(env, sort_keys=False, allow_unicode=True, width=100), end="")
        return 0
    sources = sources_dir(args.sources)
    paths = [args.record] if args.record else [r.path for r in load_records(args.projects_dir)]
    done = missing = failed = 0
    for path in paths:
        try:
            line = fill_record(path, sources, args.mirror_root)
        except (SourceError, OSError, ValueError) as exc:
            if args.record:
                raise _error(f"{path}: {exc}") from exc
            failed += 1
            line = f"{path.name}: FAILED: {exc}"
        if line.endswith("no tree"):
            missing += 1
        elif "FAILED" not in line:
            done += 1
        print(line, flush=True)
    print(f"{done} record(s) given the {ENVIRONMENT} field, {missing} without a tree here "
          f"(sources {sources or '-'}, mirrors {args.mirror_root}), {failed} failed")
    return 1 if failed else 0


def fill_record(path: Path, sources: Path | None, mirror_root: Path | None) -> str:
    """Write the record's environment field from its tree; 'no tree' when none is here."""
    rec = load_record(path)
    if rec.data is None:
        raise ValueError(f"{rec.error}: fix it (gpu2tpu corpus check)")
    rid, repo, commit = rec.data.get("id"), rec.data.get("repo"), rec.data.get("commit")
    if not all(isinstance(x, str) for x in (rid, repo, commit)):
        raise ValueError("record needs id, repo and commit (gpu2tpu corpus check)")
    assert isinstance(rid, str) and isinstance(repo, str) and isinstance(commit, str)
    found = open_tree(rid, repo, commit, sources, mirror_root)
    if found is None:
        return f"{repo}: no tree"
    source, tree = found
    try:
        env = extract(source, commit, tree, repo)
        scan = rec.data.get("scan") if isinstance(rec.data.get("scan"), dict) else {}
        roots = ((scan.get("cuda_only") or {}).get("training_roots") or [])
        if roots and env["install"]:  # drop what only another part of the repository imports
            py = [e for e in source.entries() if e.path.endswith(".py") and 0 <= e.size <= 2_000_000]
            texts = {e.path: d.decode("utf-8", "replace") for e, d in source.read_many(py) if d}
            drop = set(install_scope.foreign_steps(env["install"], texts, roots))
            env["install"] = [s for i, s in enumerate(env["install"]) if i not in drop]
    finally:
        source.close()
    write_environment(path, env)
    return f"{repo}: {tree}: {summary(env)}"
