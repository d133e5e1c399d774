"""`--help` of `gpu2tpu submit`, `gpu2tpu leaderboard` and each of its subcommands ends with an
example (issue 42), shown line for line, and every example is a command the parser accepts."""

from __future__ import annotations

import shlex

import pytest

from gpu2tpu.cli import build_parser, main
from gpu2tpu.leaderboard.cli_help import EXAMPLES

COMMANDS = ["submit", "leaderboard", "agents", "tasks", "failures", "costs", "calibration", "sql",
            "export", "publish", "site", "verify", "migrate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_ends_with_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [command] if command in ("submit", "leaderboard") else ["leaderboard", command]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    lines = EXAMPLES[command].splitlines()
    tail = out.rstrip("\n").splitlines()[-len(lines) - 1:]
    assert tail[0] in ("example:", "examples:"), out
    assert [t.strip() for t in tail[1:]] == [line.strip() for line in lines]
    for line in lines:
        words = shlex.split(line.split("#")[0].split(">")[0])
        assert words[0] == "gpu2tpu" and words[1:len(argv) + 1] == argv, line
        build_parser().parse_args(words[1:])  # a command the parser takes as it is
    assert "GPU2TPU_DB_WAIT" in out or command not in ("submit", "leaderboard")
