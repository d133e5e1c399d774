"""Fixtures for the leaderboard tests: an isolated store location, the stand-in regrader and a
headless Chromium for the page."""

from __future__ import annotations

from pathlib import Path

import lb_runfactory as runfactory
import pytest
import yaml
from lb_browser import browser  # noqa: F401  (the page tests' Chromium, shared)

from gpu2tpu.leaderboard import ingest


@pytest.fixture(autouse=True)
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the user's cache: the default store lives in tmp_path."""
    db = tmp_path / "default.duckdb"
    monkeypatch.setenv("GPU2TPU_DB", str(db))
    return db


@pytest.fixture
def fake_regrader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace only the one call into the harness, for synthetic runs of made-up tasks. These runs
    stand for runs the maintainers executed themselves, so `submit` stores them as verified (the
    trust rules are tested on real runs in test_trust.py)."""
    monkeypatch.setattr(ingest, "regrade_graded", runfactory.fake_regrade)
    monkeypatch.setattr(ingest.submit, "__kwdefaults__", {"trust": ingest.VERIFIED})


@pytest.fixture
def corpus_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-task corpus, so tests do not depend on the practice tasks being written now."""
    from gpu2tpu.tasks import TASKS_DIR, finder

    tasks = tmp_path / "corpus_tasks"
    (tasks / "cifar_amp").mkdir(parents=True)
    real = yaml.safe_load((TASKS_DIR / "cifar_amp" / "task.yaml").read_text())
    (tasks / "cifar_amp" / "task.yaml").write_text(yaml.safe_dump({**real, "title": "CIFAR with fp16 AMP"}))
    monkeypatch.setattr(finder, "TASKS_DIR", tasks)
    return tasks


@pytest.fixture(scope="session")
def real_run_dir(request: pytest.FixtureRequest) -> Path:
    """The practice run (tests/conftest.py), or `$GPU2TPU_REAL_RUN`: a run directory an earlier
    session's practice_run left behind, to iterate on these tests without re-evaluating."""
    import os

    if os.environ.get("GPU2TPU_REAL_RUN"):
        return Path(os.environ["GPU2TPU_REAL_RUN"])
    return request.getfixturevalue("practice_run")

