"""Every leaderboard command accepts relative, `~`, symlinked and space-containing paths (typed
by a user, not expanded by a shell), and no output file carries a local absolute path."""

from __future__ import annotations

from pathlib import Path

import lb_runfactory as rf
import pytest

from gpu2tpu.cli import main

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")


def test_commands_with_user_typed_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    home = tmp_path / "home dir"
    work = home / "my work"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    rf.write_run(work / "runs dir", [rf.Eval("cifar_amp"), rf.Eval("mnist_mlp", backend="cpu")],
                 run_id="demo")
    rf.write_metadata(work / "meta data.yaml")
    (tmp_path / "linked").symlink_to(work)
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "linked/runs dir/demo", "--metadata", "~/my work/meta data.yaml",
                 "--db", "~/store dir/lb.duckdb"]) == 0
    assert (home / "store dir" / "lb.duckdb").is_file()
    monkeypatch.chdir(work)
    assert main(["leaderboard", "agents", "--db", "../store dir/lb.duckdb", "--format", "json"]) == 0
    assert '"agent-a"' in capsys.readouterr().out
    assert main(["leaderboard", "export", "--to", "~/export dir", "--db", "~/store dir/lb.duckdb"]) == 0
    assert main(["leaderboard", "tasks", "--from", "~/export dir"]) == 0
    assert main(["leaderboard", "site", "--to", "site dir", "--from", "../export dir",
                 "--runs", "runs dir"]) == 0
    capsys.readouterr()
    for path in (work / "site dir").rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js", ".md"):
            assert str(tmp_path) not in path.read_text(), path
    assert list((work / "site dir" / "files").rglob("report.json"))  # linked files were copied
