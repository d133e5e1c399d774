"""Fixtures for the leaderboard tests: an isolated store location and the stand-in regrader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpu2tpu.leaderboard import ingest
import lb_runfactory as runfactory


@pytest.fixture(autouse=True)
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the user's cache: the default store lives in tmp_path."""
    db = tmp_path / "default.duckdb"
    monkeypatch.setenv("GPU2TPU_DB", str(db))
    return db


@pytest.fixture
def fake_regrader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace only the one call into the harness (until gpu2tpu.harness.regrade exists)."""
    monkeypatch.setattr(ingest, "regrade_verdict", runfactory.fake_regrade)


@pytest.fixture
def real_run_dir() -> Path:
    """A run directory produced by `gpu2tpu evaluate` on the practice tasks.

    Lead: replace this with a fixture that runs `gpu2tpu evaluate` (or points at a checked-in
    fixture run under tests/fixtures). Until then it reads $GPU2TPU_REAL_RUN_DIR.
    """
    path = os.environ.get("GPU2TPU_REAL_RUN_DIR")
    if not path:
        pytest.skip("no real run yet: set GPU2TPU_REAL_RUN_DIR to a `gpu2tpu evaluate` run dir")
    return Path(path)


@pytest.fixture
def corpus_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-task corpus, so tests do not depend on the practice tasks being written now."""
    from gpu2tpu import corpus

    tasks = tmp_path / "corpus_tasks"
    (tasks / "cifar_amp").mkdir(parents=True)
    (tasks / "cifar_amp" / "task.yaml").write_text(
        "task_id: cifar_amp\ntitle: CIFAR with fp16 AMP\ntarget_chips: 1\n"
        "precision_policy: bf16_allowed\nsteps: 4\n"
    )
    monkeypatch.setattr(corpus, "TASKS_DIR", tasks)
    return tasks
