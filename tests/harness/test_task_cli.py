"""The task author's commands: `--task-dir` and `--sources` on every command that takes tasks, and
`gpu2tpu tasks pin`, whose ids are exactly what source verification accepts."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu2tpu.cli import main
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, find_task
from gpu2tpu.tasks.sources import SOURCES_ENV, Pin, SourceError, materialise_source

SHARED_SOURCES = Path(__file__).resolve().parents[3] / "shared" / "sources"
TASK_COMMANDS = (["tasks"], ["tasks", "fetch"], ["tasks", "materialise"], ["validate"], ["evaluate"])


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands write both options into the environment: each test starts (and ends) clean."""
    monkeypatch.setenv(TASK_DIRS_ENV, "")
    monkeypatch.setenv(SOURCES_ENV, "")
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))


def _copy_task(src: str, dest: Path, task_id: str, **changes: Any) -> Path:
    shutil.copytree(find_task(src).task_dir, dest, ignore=shutil.ignore_patterns("__pycache__"))
    raw = yaml.safe_load((dest / "task.yaml").read_text())
    text = (dest / "task.yaml").read_text().replace(f"task_id: {raw['task_id']}", f"task_id: {task_id}")
    for key, value in changes.items():
        text = text.replace(f"{key}: {raw[key]}", f"{key}: {value}")
    (dest / "task.yaml").write_text(text)
    return dest


@pytest.fixture
def authored(tmp_path: Path) -> Path:
    """A folder holding one practice task under a new id, found nowhere else."""
    _copy_task("varlen_cls", tmp_path / "mine" / "my_varlen", "my_varlen")
    return tmp_path / "mine"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("command", TASK_COMMANDS, ids=" ".join)
def test_every_task_command_explains_both_options(command: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--task-dir DIR" in text and "besides the shipped ones" in text, text
    assert "--sources DIR" in text and f"${SOURCES_ENV}" in text, text


def test_tasks_lists_a_task_only_in_task_dir_and_the_flag_wins_over_the_env(
        authored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, _ = _run(capsys, "tasks")
    assert rc == 0 and "my_varlen" not in out
    rc, out, _ = _run(capsys, "tasks", "--task-dir", authored)
    assert rc == 0 and "my_varlen" in out and "cifar_amp" in out
    # the same id in a folder named by the environment: the flag's copy is the one found
    other = _copy_task("varlen_cls", tmp_path / "env" / "my_varlen", "my_varlen", steps=7)
    monkeypatch.setenv(TASK_DIRS_ENV, str(other.parent))
    assert find_task("my_varlen").steps == 7  # the environment alone still works
    rc, out, _ = _run(capsys, "tasks", "--task-dir", authored)
    assert rc == 0 and find_task("my_varlen").task_dir == (authored / "my_varlen").resolve()
    rc, _, err = _run(capsys, "tasks", "--task-dir", tmp_path / "nowhere")
    assert rc == 2 and "no such directory" in err


def test_materialise_and_fetch_find_a_task_only_in_task_dir(authored: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run(capsys, "tasks", "materialise", "my_varlen", "--to", tmp_path / "no")
    assert rc == 2 and "unknown task 'my_varlen'" in err and "--task-dir" in err
    sources = tmp_path / "sources"
    sources.mkdir()
    rc, out, _ = _run(capsys, "tasks", "materialise", "my_varlen", "--task-dir", authored,
                      "--sources", sources, "--to", tmp_path / "start")
    assert rc == 0 and "wrote" in out
    project = find_task("varlen_cls").project_dir
    assert sorted(p.name for p in (tmp_path / "start").iterdir()) == \
        sorted(p.name for p in project.iterdir() if p.name != "__pycache__")
    assert os.environ[SOURCES_ENV] == str(sources.resolve())
    # before or after the subcommand alike (a subcommand's default must not erase its parent's)
    for argv in (["tasks", "--task-dir", authored, "--sources", sources, "fetch", "my_varlen"],
                 ["tasks", "fetch", "my_varlen", "--task-dir", authored, "--sources", sources]):
        os.environ[TASK_DIRS_ENV] = os.environ[SOURCES_ENV] = ""
        rc, out, _ = _run(capsys, *argv)
        assert rc == 0 and "my_varlen: practice task, nothing to fetch" in out, argv
        assert os.environ[SOURCES_ENV] == str(sources.resolve()), argv
    rc, _, err = _run(capsys, "tasks", "fetch", "--sources", tmp_path / "nowhere")
    assert rc == 2 and "--sources" in err and "no such directory" in err


def test_validate_and_evaluate_apply_both_options_before_grading(
        authored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import gpu2tpu.harness.evaluate as evaluate_module
    import gpu2tpu.harness.validate as validate_module

    sources = tmp_path / "sources"
    sources.mkdir()
    seen: dict[str, Any] = {}

    def fake_validate(task_ids: list[str], *args: Any) -> tuple[list[Any], dict[Any, Any], dict[str, Any]]:
        seen["validate"] = (task_ids, find_task(task_ids[0]).task_dir, os.environ[SOURCES_ENV])
        return [], {}, {"evaluations": [], "counts": {}, "errors": []}

    def fake_evaluate(preds: Path, run_id: str, runs: Path, tasks: list[str] | None,
                      *args: Any, **kwargs: Any) -> dict[str, Any]:
        seen["evaluate"] = (tasks, find_task("my_varlen").task_dir, os.environ[SOURCES_ENV])
        return {"evaluations": [], "errors": []}

    monkeypatch.setattr(validate_module, "validate", fake_validate)
    monkeypatch.setattr(evaluate_module, "evaluate_predictions", fake_evaluate)
    want_dir = (authored / "my_varlen").resolve()
    rc, _, _ = _run(capsys, "validate", "--tasks", "my_varlen", "--task-dir", authored,
                    "--sources", sources, "--runs", tmp_path / "runs")
    assert rc == 0 and seen["validate"] == (["my_varlen"], want_dir, str(sources.resolve()))
    os.environ[TASK_DIRS_ENV] = os.environ[SOURCES_ENV] = ""
    rc, _, _ = _run(capsys, "evaluate", "--predictions", tmp_path / "p.jsonl", "--run-id", "r",
                    "--runs", tmp_path / "runs", "--tasks", "my_varlen", "--task-dir", authored,
                    "--sources", sources)
    assert rc == 0 and seen["evaluate"] == (["my_varlen"], want_dir, str(sources.resolve()))


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _commit(repo: Path, message: str) -> str:
    _git("add", "-A", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message, cwd=repo)
    return _git("rev-parse", "HEAD", cwd=repo).strip()


def _pinned(out: str) -> dict[str, str]:
    """The task.yaml block `tasks pin` prints, parsed as an author would paste it."""
    block = out.split("# task.yaml", 1)[1].split("\n", 1)[1]
    return dict(yaml.safe_load(block)["source"])


def test_pin_a_git_repository_then_verification_accepts_exactly_those_ids(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "proj"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "train.py").write_text("print('train')\n")
    (repo / "LICENSE").write_text("MIT\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    _git("init", "-q", cwd=repo)
    _git("remote", "add", "origin", "https://github.com/someone/proj.git", cwd=repo)
    first = _commit(repo, "first")
    (repo / "pkg" / "train.py").write_text("print('train more')\n")
    second = _commit(repo, "second")
    rc, out, _ = _run(capsys, "tasks", "pin", repo, "--commit", first)
    assert rc == 0 and "licence  LICENSE" in out and "a checkout is not a source" in out
    source = _pinned(out)
    assert source == {"repo": "someone/proj", "commit": first,
                      "tree": _git("rev-parse", f"{first}^{{tree}}", cwd=repo).strip()}
    sources = tmp_path / "sources"
    _git("clone", "-q", "--bare", str(repo), str(sources / "someone+proj"), cwd=tmp_path)
    tree = materialise_source(Pin("someone__proj", **source), sources)
    assert (tree / "pkg" / "train.py").read_text() == "print('train')\n"
    with pytest.raises(SourceError, match="does not hash to the pinned tree"):
        materialise_source(Pin("someone__proj", "someone/proj", second, source["tree"]), sources)
    rc, out, _ = _run(capsys, "tasks", "pin", repo)  # HEAD by default
    assert rc == 0 and _pinned(out)["commit"] == second and "HEAD of the repository" in out


def test_pin_a_packed_snapshot_needs_its_commit_and_names_what_is_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("print(1)\n")
    (repo / "COPYING").write_text("BSD\n")
    _git("init", "-q", cwd=repo)
    commit = _commit(repo, "x")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "o__r.tree.tsv").write_text(_git("ls-tree", "-r", "-l", "--full-tree", commit, cwd=repo))
    with tarfile.open(sources / "o__r.tar.gz", "w:gz") as tar:
        for rel in ("train.py", "COPYING"):
            tar.add(repo / rel, arcname=rel)
    rc, _, err = _run(capsys, "tasks", "pin", "o__r", "--sources", sources)
    assert rc == 2 and "no corpus record" in err and "--commit" in err
    rc, out, _ = _run(capsys, "tasks", "pin", "o__r", "--sources", sources, "--commit", commit)
    assert rc == 0 and "licence  COPYING" in out and "given with --commit" in out
    source = _pinned(out)
    assert source["tree"] == _git("rev-parse", "HEAD^{tree}", cwd=repo).strip()
    assert materialise_source(Pin("o__r", **source), sources).is_dir()
    rc, _, err = _run(capsys, "tasks", "pin", "o__s", "--sources", sources)
    assert rc == 2 and "did you mean o__r?" in err and "gpu2tpu tasks pin PATH" in err
    os.environ[SOURCES_ENV] = ""  # the in-process runs above kept --sources there
    rc, _, err = _run(capsys, "tasks", "pin", "o__r")
    assert rc == 2 and "no sources directory: give --sources DIR" in err and SOURCES_ENV in err
    rc, _, err = _run(capsys, "tasks", "pin", "o__r", "--sources", tmp_path / "nowhere")
    assert rc == 2 and "no such directory" in err
    with tarfile.open(sources / "o__r.tar.gz", "w:gz") as tar:  # a file that is not the commit's
        (tmp_path / "train.py").write_text("print(2)\n")
        tar.add(tmp_path / "train.py", arcname="train.py")
    rc, _, err = _run(capsys, "tasks", "pin", "o__r", "--sources", sources, "--commit", commit)
    assert rc == 2 and "cannot pin o__r: o__r: train.py differs from the pinned commit" in err


def _shared_sources() -> Path:
    for base in (os.environ.get(SOURCES_ENV), SHARED_SOURCES):
        if base and (Path(base) / "tkipf__pygcn.tar.gz").is_file():
            return Path(base)
    pytest.skip(f"no snapshot tkipf__pygcn.tar.gz in ${SOURCES_ENV} or {SHARED_SOURCES} (the "
                "verified corpus snapshots; see their README.md)")


def test_pin_a_corpus_snapshot_then_an_authored_task_with_those_ids_materialises(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The author's loop: pin -> task.yaml -> a command with --task-dir and --sources."""
    shared = _shared_sources()
    rc, out, _ = _run(capsys, "tasks", "pin", "tkipf__pygcn", "--sources", shared)
    assert rc == 0 and "licence  LICENCE (MIT per the corpus record)" in out
    source = _pinned(out)
    assert source == yaml.safe_load(find_task("tkipf__pygcn").task_dir.joinpath("task.yaml")
                                    .read_text())["source"]
    # a new task under a new id, with a snapshot of that id, pinned by the author
    sources, tasks = tmp_path / "sources", tmp_path / "tasks"
    sources.mkdir()
    for ext in ("tar.gz", "tree.tsv", "omitted.tsv"):
        shutil.copy(shared / f"tkipf__pygcn.{ext}", sources / f"me__pygcn.{ext}")
    rc, out, _ = _run(capsys, "tasks", "pin", "me__pygcn", "--sources", sources,
                      "--commit", source["commit"], "--repo", "tkipf/pygcn")
    assert rc == 0 and _pinned(out) == source
    task = _copy_task("tkipf__pygcn", tasks / "me__pygcn", "me__pygcn")
    rc, out, _ = _run(capsys, "tasks", "materialise", "me__pygcn", "--task-dir", tasks,
                      "--sources", sources, "--to", tmp_path / "start")
    assert rc == 0 and (tmp_path / "start" / "pygcn" / "train.py").is_file()
    assert (tmp_path / "start" / "data" / "cora" / "cora.content").is_file()  # prepare.py ran
    text = (task / "task.yaml").read_text()
    (task / "task.yaml").write_text(text.replace(source["tree"], source["tree"][::-1]))
    rc, _, err = _run(capsys, "tasks", "materialise", "me__pygcn", "--task-dir", tasks,
                      "--sources", sources, "--to", tmp_path / "again")
    assert rc == 2 and "does not hash to the pinned tree" in err


def test_validate_writes_one_summary_for_every_task_it_graded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """validate grades task by task into one run directory; its summary.json lists them all (each
    task's own summary used to replace the last, so `gpu2tpu report` saw only the last task)."""
    import json

    import gpu2tpu.harness.validate as validate_module
    from gpu2tpu.record.report import Report

    def fake_validate(task_ids: list[str], *args: Any) -> tuple[list[Any], dict[Any, Any], dict[str, Any]]:
        rel = f"gold/{task_ids[0]}/report.json"
        path = tmp_path / "runs" / "v" / rel
        path.parent.mkdir(parents=True)
        Report(run_id="v", task_id=task_ids[0], task_hash="h", agent="gold", attempt=1,
               prediction_hash="p", target="xla-cpu", created_at="now",
               verdict={"migrated": True}).write(path)
        return [], {}, {"run_id": "v", "evaluations": [rel], "errors": [],
                        "counts": {"gold": {"migrated": 1, "total": 1}}}

    monkeypatch.setattr(validate_module, "validate", fake_validate)
    rc, _, _ = _run(capsys, "validate", "--tasks", "ddp_mlp", "varlen_cls", "--runs", tmp_path / "runs",
                    "--run-id", "v", "--no-record")
    summary = json.loads((tmp_path / "runs" / "v" / "summary.json").read_text())
    assert rc == 0
    assert summary["evaluations"] == ["gold/ddp_mlp/report.json", "gold/varlen_cls/report.json"]
    assert summary["counts"] == {"gold": {"migrated": 2, "total": 2}}
    assert summary["errors"] == []
