"""Every command's `--help` ends with examples the parser accepts as written; the options that
more than one command takes agree: `--workers` has one default, `agent run` spells `--task-dir`
as the others do (issue 42)."""

from __future__ import annotations

import argparse
import shlex

import pytest

from gpu2tpu.cli import build_parser
from gpu2tpu.cli_examples import subparsers
from gpu2tpu.harness.inputs import WORKERS_DEFAULT

PARSERS = subparsers(build_parser())
SHELL = {">", "|", "&&", ";"}  # an example line's command ends at these


def example_lines(help_text: str) -> list[str]:
    """The lines of the help's example block(s) that are commands (start with `gpu2tpu`)."""
    lines, inside = [], False
    for line in help_text.splitlines():
        if line.strip() in ("example:", "examples:"):
            inside = True
        elif inside and line.startswith("  gpu2tpu "):
            lines.append(line.strip())
        elif inside and line and not line.startswith(" "):
            inside = False
    return lines


def test_every_command_is_walked() -> None:
    assert {"", "evaluate", "validate", "tasks fetch", "agent run", "corpus scan",
            "leaderboard verify"} <= set(PARSERS), sorted(PARSERS)


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_help_has_an_example(path: str) -> None:
    lines = example_lines(PARSERS[path].format_help())
    assert lines, (f"`gpu2tpu {path} --help` shows no example: add one to gpu2tpu/cli_examples.py "
                   "EXAMPLES (a command from the README that works as written)")


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_examples_parse(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    for line in example_lines(PARSERS[path].format_help()):
        words = shlex.split(line, comments=True)
        words = words[:next((i for i, w in enumerate(words) if w in SHELL), len(words))]
        try:
            args = build_parser().parse_args(words[1:])
        except SystemExit as exc:
            assert exc.code == 0 and "--help" in words, \
                f"`gpu2tpu {path} --help` example does not parse: {line}"
            continue
        assert getattr(args, "func", None), line


def test_workers_default_is_one_everywhere() -> None:
    found = {path: action for path, parser in PARSERS.items() for action in parser._actions
             if "--workers" in action.option_strings}
    assert {"evaluate", "validate", "demo", "leaderboard verify"} <= set(found), sorted(found)
    assert {path: a.default for path, a in found.items()} == dict.fromkeys(found, WORKERS_DEFAULT)
    assert all(f"default {WORKERS_DEFAULT}" in (a.help or "") for a in found.values())


def test_agent_run_task_dir_and_its_old_spelling_agree() -> None:
    base = ["agent", "run", "--tasks", "t", "--model", "m", "--out", "p.jsonl"]
    new = build_parser().parse_args([*base, "--task-dir", "mytasks"])
    old = build_parser().parse_args([*base, "--tasks-dir", "mytasks"])
    assert new.task_dir == old.task_dir and str(new.task_dir) == "mytasks"
    shown = PARSERS["agent run"].format_help()
    assert "--task-dir DIR" in shown and "--tasks-dir" not in shown
    assert any(a.help == argparse.SUPPRESS for a in PARSERS["agent run"]._actions
               if "--tasks-dir" in a.option_strings)
