"""The dataset a user downloads (the package's copy, corpus/data/) is what the code builds: a
fresh `gpu2tpu corpus build` into a temporary folder holds a row per task folder the finder
lists, names only kit helpers the kit defines, and has the revision reports stamp."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpu2tpu.corpus
from gpu2tpu.corpus.build import TASK_SPLITS, BuildResult, build
from gpu2tpu.corpus.data_facts import unknown_kit_helpers
from gpu2tpu.corpus.shipped import REBUILD, content_revision, differences, split_files, stamped
from gpu2tpu.tasks import TASK_KIT
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, list_tasks


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The dataset as the code builds it now, from the package's records and task folders."""
    return build(tmp_path_factory.mktemp("corpus") / "data")


def _task_ids(data_dir: Path, split: str) -> list[str]:
    path = data_dir / f"data/tasks-{split}.parquet"
    return pq.read_table(path, columns=["task_id"]).column("task_id").to_pylist() \
        if path.is_file() else []


def test_the_build_has_a_row_per_task_folder(built: BuildResult,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TASK_DIRS_ENV, raising=False)  # the package's task folders only
    for split in TASK_SPLITS:
        assert _task_ids(built.out_dir, split) == list_tasks(kind=split), split
    assert sum(built.counts[f"tasks/{s}"] for s in TASK_SPLITS) == len(list_tasks())


def test_every_kit_helper_a_built_row_names_is_in_the_kit(built: BuildResult) -> None:
    for rel in split_files(built.out_dir):
        table = pq.read_table(built.out_dir / rel)
        for column in table.column_names:
            text = "\n".join(map(str, table.column(column).to_pylist()))
            assert unknown_kit_helpers(text, TASK_KIT) == [], (rel, column)


def test_the_build_revision_is_its_rows(built: BuildResult) -> None:
    assert stamped(built.out_dir) == built.revision == content_revision(built.out_dir)
    assert differences(built.out_dir, built.out_dir) == []


def test_a_copy_missing_a_task_or_naming_a_gone_helper_is_caught(built: BuildResult,
                                                                   tmp_path: Path) -> None:
    """What today's shipped copy had wrong (7 tasks missing, `kit.cifar_batch`, a `tolerances`
    column), done to a copy of the fresh build: each is named."""
    copy = tmp_path / "data"
    shutil.copytree(built.out_dir, copy)
    tasks = pq.read_table(copy / "data/tasks-upstream.parquet")
    gone = tasks.column("task_id")[0].as_py()
    tasks = tasks.slice(1).append_column("tolerances", pa.array([None] * (tasks.num_rows - 1),
                                                                pa.string()))
    pq.write_table(tasks, copy / "data/tasks-upstream.parquet")
    projects = pq.read_table(copy / "data/projects-main.parquet")
    notes = projects.column("hardness_notes").to_pylist()
    notes[0] = [*notes[0], "stand-in by kit.cifar_batch"]
    projects = projects.set_column(projects.column_names.index("hardness_notes"),
                                   "hardness_notes", pa.array(notes, pa.list_(pa.string())))
    pq.write_table(projects, copy / "data/projects-main.parquet")
    found = "\n".join(differences(copy, built.out_dir))
    assert f"1 row(s) missing from the shipped copy: {gone}" in found
    assert "data/tasks-upstream.parquet: column(s) the code no longer builds: tolerances" in found
    assert "1 row(s) name kit.cifar_batch, which tasks/task_kit.py does not define" in found
    assert f"is not the revision of the rows the shipped copy holds ({content_revision(copy)})" \
        in found
    assert f"rebuild it with `{REBUILD} --out {copy}`" in found


def test_the_shipped_copy_is_what_the_code_builds(built: BuildResult,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = gpu2tpu.corpus.DATA_DIR
    problems = differences(shipped, built.out_dir)
    assert not problems, (f"{shipped} is not what the code builds (run `{REBUILD}`, then add "
                          "the old revision to leaderboard/data/known_revisions.txt):\n  "
                          + "\n  ".join(problems))
    assert gpu2tpu.corpus.revision() == built.revision  # what every report stamps
    monkeypatch.delenv(TASK_DIRS_ENV, raising=False)
    tasks = gpu2tpu.corpus.load("tasks")
    assert sorted(t for split in tasks.values() for t in split["task_id"]) == list_tasks()
