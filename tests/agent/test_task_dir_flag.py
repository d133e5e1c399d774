"""`gpu2tpu agent run --task-dir DIR`: the flag every other command spells so (issue 42); the old
`--tasks-dir` still works and is not shown in `--help`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu2tpu.cli import main


def _run(flag: str, tasks_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`agent run` up to the API key check: every earlier check (the task found in DIR) passed."""
    monkeypatch.delenv("GPU2TPU_TEST_NO_KEY", raising=False)
    argv = ["agent", "run", "--tasks", "toy", "--model", "claude-sonnet-4-5", "--out",
            str(tmp_path / "p.jsonl"), flag, str(tasks_dir), "--api-key-env", "GPU2TPU_TEST_NO_KEY"]
    assert main(argv) == 2
    return argv[-1]


@pytest.mark.parametrize("flag", ["--task-dir", "--tasks-dir"])
def test_task_dir_finds_the_task(flag: str, tasks_dir: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    _run(flag, tasks_dir, tmp_path, monkeypatch)
    err = capsys.readouterr().err
    assert "no API key: set GPU2TPU_TEST_NO_KEY" in err, err  # `toy` was found in DIR
    _run(flag, tmp_path / "elsewhere", tmp_path, monkeypatch)
    assert "unknown task 'toy'" in capsys.readouterr().err  # ... and only there


def test_help_names_task_dir_only(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["agent", "run", "--help"])
    out = capsys.readouterr().out
    assert "--task-dir DIR" in out and "--tasks-dir" not in out
