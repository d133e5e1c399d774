"""End to end: the scripted agent migrates a real task (a practice task, and an upstream corpus
project where its verified source is reachable), then `gpu2tpu evaluate` grades it.

The scripted "model" replays the task's gold migration through the agent's own tools
(write_file for every file the gold patch changes or adds, run_command for deletions), so the
prediction the agent writes must apply, run under the probe, and be judged migrated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_messages_api import API_KEY, ScriptedAPI, tool_turn

from gpu2tpu.agent.workspace import tree_files
from gpu2tpu.cli import main
from gpu2tpu.tasks import TASKS_DIR
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.materialise import materialise, original_tree
from gpu2tpu.tasks.sources import SOURCES_ENV, source_present

SHARED_SOURCES = Path(__file__).resolve().parents[3] / "shared" / "sources"


def _practice_task() -> str | None:
    ids = sorted(p.parent.parent.name for p in TASKS_DIR.glob("*/migrations/gold.patch"))
    return "cifar_amp" if "cifar_amp" in ids else (ids[0] if ids else None)


def _upstream_task() -> str | None:
    ids = list_tasks(kind="upstream")
    return "tkipf__pygcn" if "tkipf__pygcn" in ids else (ids[0] if ids else None)


TASK = _practice_task()
UPSTREAM = _upstream_task()


def _gold_tool_calls(task_id: str, tmp: Path) -> list[tuple[str, dict]]:
    """Tool calls that turn the task's starting tree into the tree its gold migration gives."""
    spec = find_task(task_id)
    original = original_tree(spec)
    gold = materialise(spec, tmp / "gold", "gold")
    before, after = tree_files(original), tree_files(gold)
    calls: list[tuple[str, dict]] = []
    for rel, path in sorted(after.items()):
        if rel not in before or before[rel].read_bytes() != path.read_bytes():
            calls.append(("write_file", {"path": rel, "content": path.read_text()}))
    for rel in sorted(set(before) - set(after)):
        calls.append(("run_command", {"command": f"rm -- '{rel}'"}))
    assert calls, "gold.patch changes nothing"
    return calls


@pytest.mark.parametrize("kind", ["practice", "upstream"])
def test_scripted_agent_gold_is_migrated(kind: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    task = TASK if kind == "practice" else UPSTREAM
    if task is None:
        pytest.skip(f"no {kind} task in {TASKS_DIR}")
    if kind == "upstream":
        if not os.environ.get(SOURCES_ENV) and SHARED_SOURCES.is_dir():
            monkeypatch.setenv(SOURCES_ENV, str(SHARED_SOURCES))
        if source_present(find_task(task).source) == "missing":  # type: ignore[arg-type]
            pytest.skip(f"no source for {task}: set {SOURCES_ENV} to a snapshots directory")
    calls = _gold_tool_calls(task, tmp_path)
    script = [tool_turn(("list_files", {})), tool_turn(*calls),
              tool_turn(("finish", {"claimed_success": True, "summary": "gold replayed"}))]
    preds = tmp_path / "preds.jsonl"
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    with ScriptedAPI(script) as api:
        code = main(["agent", "run", "--tasks", task, "--model", "claude-sonnet-4-5",
                     "--out", str(preds), "--base-url", api.url, "--work-dir", str(tmp_path)])
    assert code == 0 and len(api.requests) == 3
    (pred,) = [json.loads(line) for line in preds.read_text().splitlines()]
    assert pred["claimed_success"] is True and pred["patch"] and "error" not in pred

    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, "-m", "gpu2tpu", "evaluate", "--predictions", str(preds),
         "--run-id", "agent-e2e", "--tasks", task, "--runs", str(runs)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )
    reports = sorted(runs.rglob("report.json"))
    detail = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert reports, f"no report.json written\n{detail}"
    report = json.loads(reports[0].read_text())
    assert report["task_id"] == task and report["agent"] == "gpu2tpu-baseline"
    assert report["verdict"]["migrated"] is True, f"{report['verdict']}\n{detail}"
    assert report["prediction"]["claimed_success"] is True
    assert report["prediction"]["agent_cost_usd"] == pred["agent_cost_usd"]
    assert done.returncode == 0, detail
