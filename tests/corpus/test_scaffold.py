"""`gpu2tpu tasks new`: a task started from its corpus record, and the newcomer's whole path
(new, edit, validate) as docs/upstream-tasks.md walks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpu2tpu.cli import main
from gpu2tpu.corpus.scaffold import command_parts
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, find_task
from gpu2tpu.tasks.sources import SOURCES_ENV
from gpu2tpu.tasks.spec import FILL

# the snapshots: $GPU2TPU_SOURCES (as .ci/run sets it), or ../shared/sources beside the checkout
SHARED_SOURCES = Path(os.environ.get(SOURCES_ENV) or
                      Path(__file__).resolve().parents[3] / "shared" / "sources").resolve()
needs_sources = pytest.mark.skipif(not (SHARED_SOURCES / "tkipf__pygcn.tar.gz").is_file(),
                                   reason=f"no snapshots in {SHARED_SOURCES} (set {SOURCES_ENV})")


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TASK_DIRS_ENV, "")
    monkeypatch.setenv(SOURCES_ENV, "")
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))


def test_the_records_command_becomes_workdir_and_argv():
    assert command_parts("python train.py") == ("", ["train.py"], [])
    workdir, argv, notes = command_parts("cd utils && python train_cls.py --dataset <dataset path>")
    assert (workdir, argv[0]) == ("utils", "train_cls.py") and "placeholders" in notes[0]
    workdir, argv, notes = command_parts("sh ./scripts/run.sh")
    assert argv == ["sh", "./scripts/run.sh"] and "not python" in notes[0]
    assert command_parts(None)[1] == [FILL]


@needs_sources
def test_new_writes_a_task_that_names_what_is_left_to_fill(tmp_path: Path, capsys):
    rc = main(["tasks", "new", "tkipf__pygcn", "--dir", str(tmp_path / "mine"),
               "--sources", str(SHARED_SOURCES)])
    out = capsys.readouterr().out
    task = tmp_path / "mine" / "tkipf__pygcn"
    assert rc == 0 and "gpu2tpu validate --tasks tkipf__pygcn --task-dir" in out
    assert sorted(p.relative_to(task).as_posix() for p in task.rglob("*") if p.is_file()) == [
        "evaluate.py", "migrations/gold.py", "prepare.py", "task.yaml"]
    raw = yaml.safe_load((task / "task.yaml").read_text())
    shipped = find_task("tkipf__pygcn")
    assert (raw["source"]["commit"], raw["source"]["tree"]) == (shipped.source.commit, shipped.source.tree)
    assert raw["command"] == ["train.py"] and raw["steps"] == FILL
    for skeleton in ("prepare.py", "evaluate.py"):  # the kit, not boilerplate
        assert "from task_kit import" in (task / skeleton).read_text()
    rc = main(["validate", "--tasks", "tkipf__pygcn", "--task-dir", str(tmp_path / "mine")])
    err = capsys.readouterr().err
    assert rc == 2 and "still to fill: seed_arg, harness_seed, steps" in err and "goal.metric" in err
    rc = main(["tasks", "new", "tkipf__pygcn", "--dir", str(tmp_path / "mine"),
               "--sources", str(SHARED_SOURCES)])
    assert rc == 2 and "already exists" in capsys.readouterr().err


def test_new_without_sources_says_where_to_point(tmp_path: Path, capsys):
    rc = main(["tasks", "new", "tkipf__pygcn", "--dir", str(tmp_path)])
    assert rc == 2 and "--sources DIR" in capsys.readouterr().err
    assert not (tmp_path / "tkipf__pygcn").exists()


@needs_sources
def test_newcomer_path_new_edit_validate(tmp_path: Path):
    """The docs' walk-through, typed as a user would from a fresh directory: scaffold pygcn, fill
    it in (here: with the shipped task's files, as an author's edits), validate it."""
    # the session's reference cache: an author's copy of a task with the shipped task's reference
    # inputs reuses its bundle (cold builds are what every session suite does)
    env = {**os.environ, SOURCES_ENV: str(SHARED_SOURCES), TASK_DIRS_ENV: ""}
    gpu2tpu = [sys.executable, "-m", "gpu2tpu"]
    subprocess.run([*gpu2tpu, "tasks", "new", "tkipf__pygcn", "--dir", "mytasks"], cwd=tmp_path,
                   env=env, check=True)
    task, shipped = tmp_path / "mytasks" / "tkipf__pygcn", find_task("tkipf__pygcn").task_dir
    for rel in ("task.yaml", "prepare.py", "evaluate.py", "migrations"):  # the author's edits
        src, dst = shipped / rel, task / rel
        shutil.rmtree(dst) if dst.is_dir() else dst.unlink()
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__")) if src.is_dir() \
            else shutil.copyfile(src, dst)
    for extra in sorted((task / "migrations" / "broken").glob("*"))[2:]:  # one broken recipe, labelled
        extra.unlink()
    proc = subprocess.run([*gpu2tpu, "validate", "--tasks", "tkipf__pygcn", "--task-dir", "mytasks",
                           "--runs", "runs", "--workers", "2"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "migrations graded as labelled" in proc.stdout and "s per task" in proc.stdout
    record = yaml.safe_load((task / "validated.json").read_text())
    assert record["content_hash"] == find_task("tkipf__pygcn", tmp_path / "mytasks").content_hash
