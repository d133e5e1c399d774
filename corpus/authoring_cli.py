"""`gpu2tpu tasks pin` and `gpu2tpu tasks new`: start an upstream task from a corpus project (its
record and its snapshot). They live with the corpus, which owns the records, and are added to the
`tasks` command, which lists, fetches and materialises the tasks."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu2tpu.task_options import apply_task_options
from gpu2tpu.tasks.sources import SOURCES_ENV
from gpu2tpu.tasks_cli import tasks_subcommands


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
    w = tsub.add_parser("new", help="start an upstream task from a corpus project (scaffold)",
                        description="Pin the project's snapshot (as `tasks pin`), then write "
                        "DIR/OWNER__NAME/: task.yaml with the source, command and title from the "
                        "corpus record and every value to measure marked FILL; prepare.py and "
                        "evaluate.py skeletons on the task kit; a gold recipe skeleton. Then fill "
                        "them in and run `gpu2tpu validate --tasks OWNER__NAME --task-dir DIR` "
                        "(docs/upstream-tasks.md).")
    w.add_argument("what", metavar="OWNER__NAME|PATH", help="a corpus id or a git repository's path")
    w.add_argument("--dir", type=Path, default=Path("."), metavar="DIR",
                   help="where the task folder is written (default: the current directory)")
    w.add_argument("--commit", help="as for `tasks pin`")
    w.add_argument("--repo", metavar="OWNER/NAME", help="as for `tasks pin`")
    w.add_argument("--sources", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                   help=f"where the snapshot or mirror is (default ${SOURCES_ENV})")
    w.set_defaults(func=cmd_new)


def cmd_pin(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.pin import pin_source

    apply_task_options(args)
    print(pin_source(args.what, args.sources, args.commit, args.repo).render())
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.scaffold import scaffold_task

    apply_task_options(args)
    dest = scaffold_task(args.what, args.dir, args.sources, args.commit, args.repo)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    print(f"wrote {dest}: {', '.join(files)}")
    print("next: fill every FILL (task.yaml, prepare.py, evaluate.py, migrations/gold.py), add broken "
          "recipes with labels, then")
    print(f"  gpu2tpu validate --tasks {dest.name} --task-dir {args.dir}")
    return 0
