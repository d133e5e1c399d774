"""Every upstream task's gold recipe is graded migrated and every broken recipe exactly as labelled,
for real on the XLA CPU device, from verified sources (skipped, saying how, when none are reachable)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu2tpu.harness.validate import expected, graded
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.spec import read_label

UPSTREAM = list_tasks(kind="upstream")


def test_upstream_tasks_are_complete() -> None:
    for task_id in UPSTREAM:
        spec = find_task(task_id)
        assert spec.source and len(spec.source.commit) == 40 and len(spec.source.tree) == 40
        broken = spec.migration_names("broken")
        assert len(broken) >= 2, f"{task_id}: at least two broken recipes"
        labels = [read_label(spec.migration_file(b)) for b in broken]
        assert any(label.silent for label in labels), f"{task_id}: no silent broken recipe"
        assert (spec.task_dir / "prepare.py").is_file() and (spec.task_dir / "evaluate.py").is_file()
        assert not (spec.task_dir / "project").exists(), "upstream code is never stored in the repo"


@pytest.mark.skipif(not UPSTREAM, reason="no upstream task in tasks/")
def test_every_upstream_verdict_as_labelled(upstream_run: Path) -> None:
    summary = json.loads((upstream_run / "summary.json").read_text())
    mismatches = []
    for rel in summary["evaluations"]:
        r = json.loads((upstream_run / rel).read_text())
        spec = find_task(r["task_id"])
        if r["agent"] == "gold" or r["agent"].startswith("alt-"):  # correct migrations
            want: tuple[str, tuple[str, ...], bool] = ("migrated", (), False)
        else:
            label = read_label(spec.migration_file("broken/" + r["agent"].removeprefix("broken-")))
            want = expected(label.category, label.failing, label.silent)
        got = graded(r["verdict"])
        if got != want:
            v = r["verdict"]
            bad = [e["text"] for c in v["criteria"].values() for e in c["evidence"] if not e["ok"]]
            mismatches.append(f"{r['agent']}/{r['task_id']}: got {got}, want {want}; {bad}")
    assert not mismatches, "\n".join(mismatches)
