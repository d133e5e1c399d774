"""`gpu2tpu tasks`: list the tasks, fetch and verify upstream sources, materialise a starting
tree. (`tasks pin` and `tasks new` start a task from a corpus record: corpus/authoring_cli.py.)"""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.harness.progress import Progress
from gpu2tpu.task_options import add_task_options, apply_task_options
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.sources import source_present
from gpu2tpu.tasks.spec import read_label


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
    t = tsub.add_parser("table", help="the README's table of tasks: hazards and labelled migrations",
                        description="Print a markdown table of the tasks of one kind: the hazards "
                        "each exercises (task.yaml `hazards`), its broken migrations with their "
                        "labelled category (* silent) and its correct alternatives.")
    t.add_argument("--kind", choices=("upstream", "practice"), default="upstream")
    add_task_options(t)
    t.set_defaults(func=cmd_table)


def markdown_table(kind: str = "upstream") -> str:
    """The README's table of tasks of one kind: each task, the hazards it exercises (task.yaml),
    and its broken migrations with the category each is labelled (silent ones marked *)."""
    rows = ["| task | what it is | hazards | broken migrations (labelled category; * silent) | "
            "correct alternatives |", "| --- | --- | --- | --- | --- |"]
    for task_id in list_tasks():
        spec = find_task(task_id)
        if spec.kind != kind:
            continue
        broken = []
        for name in spec.migration_names("broken"):
            label = read_label(spec.migration_file(name))
            broken.append(f"{name.split('/', 1)[1]} ({label.category}{'*' if label.silent else ''})")
        alts = [n.split("/", 1)[1] for n in spec.migration_names("alternatives")]
        rows.append(f"| `{task_id}` | {spec.title} | {', '.join(spec.hazards) or '-'} | "
                    f"{', '.join(broken) or '-'} | {', '.join(alts) or '-'} |")
    return "\n".join(rows)


def cmd_table(args: argparse.Namespace) -> int:
    apply_task_options(args)
    print(markdown_table(args.kind))
    return 0


def tasks_subcommands(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The `tasks` command's own subcommands, for packages that add to them (the corpus adds `pin`
    and `new`, which start a task from a corpus record)."""
    parser = sub.choices["tasks"]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def cmd_list(args: argparse.Namespace) -> int:
    apply_task_options(args)
    for task_id in list_tasks():
        spec = find_task(task_id)
        where = source_present(spec.source) if spec.source else "shipped"
        print(f"{task_id:36} {spec.kind:8} source={where:8} chips={spec.target_chips} "
              f"steps={spec.steps:<4} {spec.title}")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from gpu2tpu.tasks.materialise import original_tree

    apply_task_options(args)
    ids = args.ids or list_tasks(kind="upstream")
    failed = 0
    progress = Progress(len(ids))  # `[k/N] ID: ...; elapsed, about M min left` per source
    for task_id in ids:
        spec = find_task(task_id)
        if not spec.upstream:
            said = f"{task_id}: practice task, nothing to fetch"
        else:
            try:
                files = sum(1 for p in original_tree(spec).rglob("*") if p.is_file())
                said = (f"{task_id}: verified {spec.source.commit[:12] if spec.source else ''} "
                        f"({files} files with stand-in data)")
            except UserError as exc:
                said = f"{task_id}: FAILED: {exc}"
                failed += 1
        progress.done()
        print(progress.line(said), flush=True)
    return 1 if failed else 0


def cmd_materialise(args: argparse.Namespace) -> int:
    from gpu2tpu.tasks.materialise import materialise

    apply_task_options(args)
    spec = find_task(args.id)
    dest = materialise(spec, args.to, args.migration)
    print(f"wrote {dest}" + (f" with migration {args.migration}" if args.migration else ""))
    return 0
