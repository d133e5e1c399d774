"""Shared fixtures. `practice_run` evaluates every gold and broken migration of every practice task
once per test session, for real on the XLA CPU device (several minutes)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from gpu2tpu.tasks import TASKS_DIR

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")


# Two lanes (README: fast first, then slow). A test is `slow` when it trains real models: it uses
# one of these fixtures (directly or through another), or says so with @pytest.mark.slow.
SLOW_FIXTURES = {"practice_run", "real_run_dir", "upstream_run", "attacked", "graded"}
# Tests that evaluate for real without those fixtures (each took 15 s or more, measured).
SLOW_TESTS = {"test_walkthrough_verbatim", "test_paths_a_user_can_type",
              "test_stray_child_ends_at_the_time_limit", "test_scripted_agent_gold_is_migrated",
              "test_gc_walk_filter_is_graded_tampered_with_its_line_quoted",
              "test_time_limit_kills_the_process_group",
              "test_sleeping_steps_are_slow_even_beside_their_own_burners",
              "test_bundle_round_trip_submit_verify_ranked", "test_newcomer_path_new_edit_validate"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", None) or item.name
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or name in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _task_dirs_per_test():
    """`--task-dir` registers folders in the environment (for child processes): a test's own
    folders never leak into the next test's task list."""
    from gpu2tpu.tasks.finder import TASK_DIRS_ENV

    saved = os.environ.get(TASK_DIRS_ENV)
    yield
    if saved is None:
        os.environ.pop(TASK_DIRS_ENV, None)
    else:
        os.environ[TASK_DIRS_ENV] = saved


def pytest_configure(config: pytest.Config) -> None:
    # One reference cache per test session, shared by every test (and the processes they start),
    # so each practice task's references are built once and nothing from outside the session is used.
    if "GPU2TPU_CACHE" not in os.environ:
        os.environ["GPU2TPU_CACHE"] = tempfile.mkdtemp(prefix="gpu2tpu-test-cache-")


def practice_predictions() -> list[dict]:
    lines = []
    for task_dir in sorted(p for p in TASKS_DIR.iterdir() if (p / "migrations" / "gold.patch").exists()):
        mig = task_dir / "migrations"
        lines.append({"schema_version": 1, "task_id": task_dir.name, "agent": "gold",
                      "patch": (mig / "gold.patch").read_text(), "claimed_success": True,
                      "agent_cost_usd": 0.0, "human_interventions": 0})
        for patch in sorted((mig / "alternatives").glob("*.patch")):
            lines.append({"schema_version": 1, "task_id": task_dir.name, "agent": f"alt-{patch.stem}",
                          "patch": patch.read_text(), "claimed_success": True})
        for patch in sorted((mig / "broken").glob("*.patch")):
            lines.append({"schema_version": 1, "task_id": task_dir.name,
                          "agent": f"broken-{patch.stem}", "patch": patch.read_text(),
                          "claimed_success": True, "agent_cost_usd": 0.01})
    return lines


@pytest.fixture(scope="session")
def practice_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gpu2tpu.harness.evaluate import evaluate_predictions

    root = tmp_path_factory.mktemp("practice")
    preds = root / "preds.jsonl"
    preds.write_text("".join(json.dumps(line) + "\n" for line in practice_predictions()))
    # two at a time: CI time, and every timing criterion graded with both cores busy (issue 11)
    summary = evaluate_predictions(preds, "practice", root / "runs", workers=2)
    assert not summary["errors"], summary["errors"]
    return root / "runs" / "practice"


@pytest.fixture(scope="session")
def real_run_dir(practice_run: Path) -> Path:
    """A run directory written by `gpu2tpu evaluate` on the practice tasks (for the leaderboard)."""
    return practice_run
