"""The `gpu2tpu` command: each package registers its own subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys

from gpu2tpu.cli_examples import add_examples
from gpu2tpu.errors import UserError

# (module, register function): each adds subcommands to the shared parser.
_REGISTRARS = (
    "gpu2tpu.harness.cli",
    "gpu2tpu.harness.references_cli",
    "gpu2tpu.tasks_cli",
    "gpu2tpu.agent.cli",
    "gpu2tpu.corpus.cli",
    "gpu2tpu.leaderboard.cli",
)


def build_parser() -> argparse.ArgumentParser:
    from gpu2tpu import __version__

    parser = argparse.ArgumentParser(
        prog="gpu2tpu",
        description="Benchmark coding agents that migrate PyTorch projects from GPUs to TPUs: "
        "download the corpus, evaluate migrations, query the leaderboard.",
    )
    parser.add_argument("--version", action="version", version=f"gpu2tpu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _REGISTRARS:
        importlib.import_module(name).register(sub)
    add_examples(parser)  # gpu2tpu/cli_examples.py: every --help ends with examples
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"gpu2tpu: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `gpu2tpu tasks | head`: the reader left; nothing to report
        sys.stderr.close()
        return 141
    except KeyboardInterrupt:
        print("gpu2tpu: interrupted", file=sys.stderr)
        return 130
