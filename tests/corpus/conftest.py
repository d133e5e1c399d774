"""Fixtures for corpus tests (helpers live in corpus_helpers.py, a uniquely named module)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from corpus_helpers import (
    TASK,
    TIER0,
    TIER1,
    TIER2,
    TIER3,
    commit_files,
    record,
    write_considered,
    write_record,
)


@pytest.fixture
def tier_repos(tmp_path: Path) -> dict[int, tuple[Path, str]]:
    """Four work-tree repositories (tier 0..3) with their HEAD commits."""
    out = {}
    for tier, files in enumerate((TIER0, TIER1, TIER2, TIER3)):
        path = tmp_path / f"tier{tier}"
        out[tier] = (path, commit_files(path, files))
    return out


@pytest.fixture(scope="session")
def small(tmp_path_factory) -> dict[str, Path]:
    """Three scanned records (two main, one reference_only), a log, and one practice task."""
    from gpu2tpu.corpus.scanner import scan_path

    root = tmp_path_factory.mktemp("small")
    projects, curation, tasks = root / "projects", root / "curation", root / "tasks"
    rows = []
    for repo, files, split, domain in (("alice/a", TIER0, "main", "vision"),
                                       ("bob/b", TIER3, "main", "nlp"),
                                       ("carl/c", TIER2, "reference_only", "rl")):
        work = root / "work" / repo.replace("/", "_")
        rec = record(repo, commit_files(work, files), split=split, domain=domain)
        rec["scan"] = scan_path(work, repo=repo)
        write_record(projects, rec)
        rows.append((repo, "included" if split == "main" else "reference_only", "ok", "x"))
    rows.append(("dan/d", "excluded", "not_pytorch", "TensorFlow only"))
    write_considered(curation, rows)
    (tasks / "toy").mkdir(parents=True)
    (tasks / "toy" / "task.yaml").write_text(yaml.safe_dump(TASK, sort_keys=False))
    (root / "no_tasks").mkdir()
    return {"projects": projects, "curation": curation, "tasks": tasks, "root": root}
