"""The grading code's rooms (gpu2tpu/rooms.py): the folders are the keys. An edit under record/,
sandbox/ or the task machinery changes the recorder hash (and so every reference key); an edit
under judge/ changes the judge hash alone; an edit anywhere else changes neither."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpu2tpu import rooms
from gpu2tpu.harness.references import reference_key


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Copies of every keyed package (and harness/), which the hashes then read."""
    for name in (*rooms.RECORDER_PACKAGES, *rooms.JUDGE_PACKAGES, "harness"):
        src = rooms.package_folder(name)
        dest = tmp_path / name
        dest.mkdir()
        for path in src.iterdir():
            if path.is_file():
                shutil.copyfile(path, dest / path.name)
    monkeypatch.setattr(rooms, "package_folder", lambda name: tmp_path / name)
    rooms.recorder_hash.cache_clear()
    rooms.judge_hash.cache_clear()
    yield tmp_path
    rooms.recorder_hash.cache_clear()
    rooms.judge_hash.cache_clear()


def _keys(tmp_path: Path) -> tuple[str, str, str]:
    rooms.recorder_hash.cache_clear()
    rooms.judge_hash.cache_clear()
    (tmp_path / "task").mkdir(exist_ok=True)
    spec = SimpleNamespace(task_dir=tmp_path / "task")
    key = reference_key(spec, SimpleNamespace(name="xla-cpu"))  # type: ignore[arg-type]
    return rooms.recorder_hash(), rooms.judge_hash(), key


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "# edited\n")


def test_a_record_edit_changes_the_recorder_hash_and_the_reference_key(copies: Path) -> None:
    before = _keys(copies)
    _edit(copies / "record" / "runner.py")
    after = _keys(copies)
    assert after[0] != before[0] and after[2] != before[2] and after[1] == before[1]


@pytest.mark.parametrize("edited", ["sandbox/view.py", "tasks/task_kit.py", "tasks/recipe.py"])
def test_the_sandbox_and_the_task_machinery_are_recording(copies: Path, edited: str) -> None:
    before = _keys(copies)
    _edit(copies / edited)
    assert _keys(copies)[0] != before[0]


def test_a_judge_edit_changes_the_judge_hash_alone(copies: Path) -> None:
    before = _keys(copies)
    _edit(copies / "judge" / "criteria.py")
    after = _keys(copies)
    assert after[1] != before[1] and after[0] == before[0] and after[2] == before[2]


def test_front_ends_and_task_folders_are_never_keyed(copies: Path) -> None:
    before = _keys(copies)
    _edit(copies / "harness" / "validate.py")
    (copies / "tasks" / "some_task").mkdir()
    (copies / "tasks" / "some_task" / "task.yaml").write_text("task_id: x\n")
    (copies / "record" / "__pycache__").mkdir()
    (copies / "record" / "__pycache__" / "runner.cpython-311.pyc").write_bytes(b"\0")
    assert _keys(copies) == before


def test_every_file_of_a_keyed_folder_counts_with_no_exceptions() -> None:
    files = {rel for rel, _ in rooms.room_files(rooms.RECORDER_PACKAGES)}
    for name in rooms.RECORDER_PACKAGES:
        folder = rooms.package_folder(name)
        assert {f"{name}/{p.name}" for p in folder.glob("*.py")} <= files
    assert {"record/probe.py", "record/execution.py", "sandbox/__init__.py", "tasks/task_kit.py"} <= files
    assert not any(rel.startswith(("judge/", "harness/")) for rel in files)
    assert {rel for rel, _ in rooms.room_files(rooms.JUDGE_PACKAGES)} == \
        {f"judge/{p.name}" for p in rooms.package_folder("judge").iterdir() if p.is_file()}
