"""`gpu2tpu tasks`: list the tasks, fetch and verify upstream sources, materialise a starting tree,
print the ids a new upstream task pins."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu2tpu.corpus.upstream import SOURCES_ENV, source_present
from gpu2tpu.errors import UserError
from gpu2tpu.harness.spec import find_task, list_tasks
from gpu2tpu.harness.task_options import add_task_options, apply_task_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="list tasks; fetch upstream sources; materialise a starting "
                       "tree; pin a new task's source",
                       description="Without a subcommand: every task with its kind (practice or "
                       "upstream) and, for upstream tasks, where its pinned source would come from.")
    add_task_options(p)
    p.set_defaults(func=cmd_list)
    tsub = p.add_subparsers(dest="tasks_command", metavar="SUBCOMMAND")
    f = tsub.add_parser("fetch", help="materialise and verify upstream sources (all, or IDS)",
                        description="Find each upstream task's pinned source (sources directory, "
                        "user cache, GitHub), check every file against the commit's tree, cache it, "
                        "and build the task's starting tree with its stand-in data.")
    f.add_argument("ids", nargs="*", metavar="ID")
    add_task_options(f)
    f.set_defaults(func=cmd_fetch)
    m = tsub.add_parser("materialise", help="write a task's starting tree (or a shipped migration)",
                        description="Write the tree an agent starts from (upstream: the verified "
                        "source plus stand-in data); with --migration, that migration applied. The "
                        "diff between the two is what a prediction for the task looks like.")
    m.add_argument("id", metavar="ID")
    m.add_argument("--migration", help="gold, broken/NAME or alternatives/NAME")
    m.add_argument("--to", required=True, type=Path, help="a new directory")
    add_task_options(m)
    m.set_defaults(func=cmd_materialise)
    n = tsub.add_parser("pin", help="print the ids a new upstream task pins (source: repo, commit, tree)",
                        description="For a snapshot in the sources directory (OWNER__NAME: "
                        "OWNER__NAME.tar.gz + .tree.tsv, or a bare mirror) or a local git repository "
                        "(PATH): verify its files against the commit's tree, then print the commit "
                        "id, the git root tree id (computed as verification computes it), the licence "
                        "file and a task.yaml `source:` block to paste. A snapshot holds no commit "
                        "id: it comes from --commit or the project's corpus record.")
    n.add_argument("what", metavar="OWNER__NAME|PATH", help="a corpus id or a git repository's path")
    n.add_argument("--commit", help="the commit (default: the corpus record's, or HEAD of PATH; 40 hex "
                   "for a snapshot, any revision of PATH)")
    n.add_argument("--repo", metavar="OWNER/NAME",
                   help="the GitHub repository (default: the corpus record's, or PATH's origin)")
    n.add_argument("--sources", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                   help=f"where the snapshot or mirror is (default ${SOURCES_ENV})")
    n.set_defaults(func=cmd_pin)


def cmd_list(args: argparse.Namespace) -> int:
    apply_task_options(args)
    for task_id in list_tasks():
        spec = find_task(task_id)
        where = source_present(spec.source) if spec.source else "shipped"
        print(f"{task_id:36} {spec.kind:8} source={where:8} chips={spec.target_chips} "
              f"steps={spec.steps:<4} {spec.title}")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from gpu2tpu.harness.migrations import original_tree

    apply_task_options(args)
    ids = args.ids or [t for t in list_tasks() if find_task(t).upstream]
    failed = 0
    for task_id in ids:
        spec = find_task(task_id)
        if not spec.upstream:
            print(f"{task_id}: practice task, nothing to fetch")
            continue
        try:
            tree = original_tree(spec)
        except UserError as exc:
            print(f"{task_id}: FAILED: {exc}")
            failed += 1
            continue
        files = sum(1 for p in tree.rglob("*") if p.is_file())
        print(f"{task_id}: verified {spec.source.commit[:12] if spec.source else ''} "
              f"({files} files with stand-in data)")
    return 1 if failed else 0


def cmd_materialise(args: argparse.Namespace) -> int:
    from gpu2tpu.harness.migrations import materialise

    apply_task_options(args)
    spec = find_task(args.id)
    dest = materialise(spec, args.to, args.migration)
    print(f"wrote {dest}" + (f" with migration {args.migration}" if args.migration else ""))
    return 0


def cmd_pin(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.pin import pin_source

    apply_task_options(args)
    print(pin_source(args.what, args.sources, args.commit, args.repo).render())
    return 0
