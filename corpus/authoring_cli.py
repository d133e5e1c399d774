"""`gpu2tpu tasks pin` and `gpu2tpu tasks new`: start an upstream task from a corpus project (its
record and its snapshot). They live with the corpus, which owns the records, and are added to the
`tasks` command, which lists, fetches and materialises the tasks."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu2tpu.tasks.cli import tasks_subcommands
from gpu2tpu.tasks.options import apply_task_options
from gpu2tpu.tasks.sources import SOURCES_ENV


def register_authoring(sub: argparse._SubParsersAction) -> None:
    tsub = tasks_subcommands(sub)
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


def cmd_pin(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.pin import pin_source

    apply_task_options(args)
    print(pin_source(args.what, args.sources, args.commit, args.repo).render())
    return 0
