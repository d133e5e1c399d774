"""A task whose project hard-codes CUDA adapts only its reference runs, and only without CUDA."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from gpu2tpu.harness.references import reference_inputs_hash
from gpu2tpu.record import execution
from gpu2tpu.record.workspace import Workspace


def _task(tmp_path: Path, with_recipe: bool) -> tuple[SimpleNamespace, Workspace]:
    task_dir = tmp_path / "task"
    (task_dir / "migrations").mkdir(parents=True)
    if with_recipe:
        (task_dir / "migrations" / "reference_cpu.py").write_text(
            "def apply(r):\n    r.replace('train.py', 'model.cuda()', 'pass')\n")
    ws = Workspace(tmp_path / "ws")
    ws.project.mkdir(parents=True)
    (ws.project / "train.py").write_text("model = object()\nif True:\n    model.cuda()\n")
    return SimpleNamespace(task_dir=task_dir), ws


def test_reference_on_cpu_runs_through_the_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "reference_device", lambda: "cpu")
    spec, ws = _task(tmp_path, with_recipe=True)
    assert execution.adapt_reference(spec, ws) == "migrations/reference_cpu.py"  # type: ignore[arg-type]
    assert (ws.project / "train.py").read_text() == "model = object()\nif True:\n    pass\n"


def test_reference_with_cuda_or_without_recipe_is_unmodified(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "reference_device", lambda: "cuda")
    spec, ws = _task(tmp_path, with_recipe=True)
    before = (ws.project / "train.py").read_text()
    assert execution.adapt_reference(spec, ws) is None  # type: ignore[arg-type]
    monkeypatch.setattr(execution, "reference_device", lambda: "cpu")
    spec, ws = _task(tmp_path / "other", with_recipe=False)
    assert execution.adapt_reference(spec, ws) is None  # type: ignore[arg-type]
    assert (ws.project / "train.py").read_text() == before


def test_reference_key_ignores_broken_and_alternative_migrations(tmp_path: Path) -> None:
    task = tmp_path / "task"
    for rel in ("evaluate.py", "migrations/gold.py", "migrations/broken/x.yaml",
                "migrations/alternatives/y.py"):
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text("a\n")
    before = reference_inputs_hash(task)
    (task / "migrations/broken/x.yaml").write_text("relabelled\n")
    (task / "migrations/alternatives/y.py").write_text("another\n")
    assert reference_inputs_hash(task) == before
    (task / "migrations/gold.py").write_text("changed\n")
    assert reference_inputs_hash(task) != before
