"""`--task-dir` and `--sources`, the same on every command that takes tasks.

`add_task_options(parser)` adds them; `apply_task_options(args)` applies them before any task is
looked up. Both are kept in the environment ($GPU2TPU_TASK_DIRS, $GPU2TPU_SOURCES) so the
processes a command starts see them too; the flags win over what the environment already says.
Defaults are suppressed, so `gpu2tpu tasks --sources X fetch` and `gpu2tpu tasks fetch --sources X`
both work (a subcommand's default would otherwise erase its parent's value)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, add_task_dirs
from gpu2tpu.tasks.sources import SOURCES_ENV

TASK_DIR_HELP = ("a task directory (with task.yaml), or a folder of them, to find tasks in besides "
                 f"the shipped ones (repeatable; searched before ${TASK_DIRS_ENV} and the shipped "
                 "tasks)")
SOURCES_HELP = ("where upstream sources are: <id>.tar.gz + <id>.tree.tsv snapshots or bare git "
                f"mirrors (default ${SOURCES_ENV}; then the user cache, then GitHub)")


def add_task_options(parser: argparse.ArgumentParser, task_dirs: bool = True,
                     sources: bool = True) -> None:
    if task_dirs:
        parser.add_argument("--task-dir", action="append", type=Path, default=argparse.SUPPRESS,
                            metavar="DIR", help=TASK_DIR_HELP)
    if sources:
        parser.add_argument("--sources", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                            help=SOURCES_HELP)


def apply_task_options(args: argparse.Namespace) -> None:
    """Make `args.task_dir` (a list) and `args.sources` (a resolved directory or None) effective."""
    args.task_dir = list(getattr(args, "task_dir", None) or [])
    sources = getattr(args, "sources", None)
    args.sources = None
    if sources is not None:
        path = Path(sources).expanduser().resolve()
        if not path.is_dir():
            raise UserError(f"--sources {sources}: no such directory (a folder of <id>.tar.gz + "
                            "<id>.tree.tsv snapshots or bare git mirrors)")
        os.environ[SOURCES_ENV] = str(path)
        args.sources = path
    if args.task_dir:
        add_task_dirs(args.task_dir)
