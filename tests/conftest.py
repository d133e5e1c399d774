"""Shared fixtures. `practice_run` grades the practice tasks once per test session, for real on the
XLA CPU device: every gold, the demo's broken migrations, and the whole suite of changed tasks."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from reference_reuse import reuse_references

from gpu2tpu.cache import cache_root
from gpu2tpu.harness import validated
from gpu2tpu.harness.ci_selection import ci_plan
from gpu2tpu.harness.validate import WHOLE_SUITES_ENV, Labelled, labelled_migrations, plan
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.sources import SOURCES_ENV, source_present

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")


# Two lanes (README: fast first, then slow). A test is `slow` when it trains real models or builds
# every upstream task's prepared tree: it uses one of these fixtures (directly or through another),
# or says so with @pytest.mark.slow.
SLOW_FIXTURES = {"practice_run", "real_run_dir", "upstream_run", "upstream_migrations", "attacked",
                 "graded"}
# Tests that evaluate for real without those fixtures (each took 15 s or more, measured).
SLOW_TESTS = {"test_walkthrough_verbatim", "test_paths_a_user_can_type",
              "test_stray_child_ends_at_the_time_limit", "test_scripted_agent_gold_is_migrated",
              "test_gc_walk_filter_is_graded_tampered_with_its_line_quoted",
              "test_time_limit_kills_the_process_group",
              "test_sleeping_steps_are_slow_even_beside_their_own_burners",
              "test_bundle_round_trip_submit_verify_ranked", "test_newcomer_path_new_edit_validate"}


# Slow tests that grade a task through a command of their own, one evaluation at a time: run after
# the session suites, which build every reference bundle two at a time (run first, these built
# theirs alone on one core while the other idled).
AFTER_SUITES = {"test_scripted_agent_gold_is_migrated", "test_newcomer_path_new_edit_validate"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def name(item: pytest.Item) -> str:
        return getattr(item, "originalname", None) or item.name

    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or name(item) in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: name(item) in AFTER_SUITES)  # stable: the rest keep their order


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


# "0": the session builds every reference bundle itself, reusing none from the user cache.
REUSE_REFERENCES_ENV = "GPU2TPU_TEST_REUSE_REFERENCES"


def pytest_configure(config: pytest.Config) -> None:
    # One cache per test session, shared by every test (and the processes they start), so each
    # task's references are built once. Of the user cache only sealed reference bundles under the
    # current keys come in (copied and checked as a reference store's are); nothing else does.
    if "GPU2TPU_CACHE" not in os.environ:
        user_references = cache_root() / "references"
        os.environ["GPU2TPU_CACHE"] = tempfile.mkdtemp(prefix="gpu2tpu-test-cache-")
        if os.environ.get(REUSE_REFERENCES_ENV, "1") != "0" and user_references.is_dir():
            reused = reuse_references(user_references)
            print(f"reference bundles reused from {user_references} by content key: {len(reused)}"
                  f"{' (' + ', '.join(reused) + ')' if reused else ''}")


def suites(task_ids: list[str], name: str, every_gold: bool = False) -> tuple[frozenset[str], dict[str, str]]:
    """CI's selection (harness/ci_selection.py): whole suites of the tasks whose own files
    changed, the golds of lapsed records and of a few holding ones; every whole suite with
    GPU2TPU_VALIDATE_ALL=1. Records that lapsed only because grading code changed are named:
    `gpu2tpu validate --all` writes them again. Returns (gold only, whole suites with why);
    `every_gold`: every task not graded whole gets its gold (the practice tasks, which are cheap)."""
    if os.environ.get(WHOLE_SUITES_ENV):
        gold_only, whole = plan(task_ids, changed_only=False)
    else:
        gold_only, whole, lapsed = ci_plan(task_ids)
        for task_id, why in lapsed.items():
            print(f"{name} suite: {task_id}'s validated.json lapsed ({why}): its gold is graded here; "
                  "`gpu2tpu validate --all` (or --changed, re-grading kept runs) writes its record")
    if every_gold:
        gold_only = frozenset(t for t in task_ids if t not in whole)
    print(f"\n{name} suite: golds of {len(gold_only)} task(s) {sorted(gold_only)}; whole suites of "
          f"{len(whole)} task(s): {whole}")
    return gold_only, whole


def practice_predictions(whole: set[str]) -> list[dict]:
    """Every practice task's gold, the demo's broken migrations (tests and the leaderboard read
    them), and every labelled migration of the tasks in `whole` (those whose validated.json no
    longer holds: the rule CI applies to upstream tasks too, harness/validate.py `plan`)."""
    from gpu2tpu.harness.cli import DEMO_BROKEN, DEMO_TASK

    demo = {f"broken-{name}" for name in DEMO_BROKEN}
    lines = []
    for task_id in practice_tasks():
        for m in labelled_migrations(find_task(task_id)):
            if m.agent == "gold" or task_id in whole or (task_id == DEMO_TASK and m.agent in demo):
                line = {"schema_version": 1, "task_id": task_id, "agent": m.agent, "patch": m.patch,
                        "claimed_success": True}
                if m.agent == "gold":
                    line.update(agent_cost_usd=0.0, human_interventions=0)
                elif m.agent.startswith("broken-"):
                    line["agent_cost_usd"] = 0.01
                lines.append(line)
    return lines


def practice_tasks() -> list[str]:
    return list_tasks(kind="practice")


@pytest.fixture(scope="session")
def practice_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Graded like the upstream suite: every gold, plus whole suites of changed tasks (every whole
    suite with GPU2TPU_VALIDATE_ALL=1), plus the demo's broken migrations."""
    from gpu2tpu.harness.evaluate import evaluate_predictions

    root = tmp_path_factory.mktemp("practice")
    _, whole = suites(practice_tasks(), "practice", every_gold=True)
    preds = root / "preds.jsonl"
    preds.write_text("".join(json.dumps(line) + "\n" for line in practice_predictions(set(whole))))
    # two at a time: CI time, and every timing criterion graded with both cores busy (issue 11)
    summary = evaluate_predictions(preds, "practice", root / "runs", workers=2)
    assert not summary["errors"], summary["errors"]
    return root / "runs" / "practice"


@pytest.fixture(scope="session")
def real_run_dir(practice_run: Path) -> Path:
    """A run directory written by `gpu2tpu evaluate` on the practice tasks (for the leaderboard)."""
    return practice_run


# The upstream suite (`upstream_run`), shared by the upstream and Ray tests.
UPSTREAM = list_tasks(kind="upstream")
SHARED_SOURCES = Path(__file__).resolve().parents[2] / "shared" / "sources"
# CI grades what a change can affect (harness/ci_selection.py); WHOLE_SUITES_ENV=1 grades every
# whole suite, as `validate --all` does


@pytest.fixture(scope="session")
def sources() -> Path:
    if not os.environ.get(SOURCES_ENV) and SHARED_SOURCES.is_dir():
        os.environ[SOURCES_ENV] = str(SHARED_SOURCES)
    missing = [t for t in UPSTREAM if source_present(find_task(t).source) == "missing"]  # type: ignore[arg-type]
    if missing:
        pytest.skip(f"no source for {', '.join(missing)}: set {SOURCES_ENV} to a directory of "
                    "snapshots (<id>.tar.gz, <id>.tree.tsv, <id>.omitted.tsv) or bare git mirrors, "
                    "or run `gpu2tpu tasks fetch` where GitHub is reachable")
    return Path(os.environ[SOURCES_ENV])


@pytest.fixture(scope="session")
def upstream_migrations(sources: Path) -> dict[str, list[Labelled]]:
    """Every upstream task's labelled migrations as diffs, made once per session (each task's
    prepared tree built, each recipe applied to a copy and diffed): the suite and the static scan
    (tests/security/test_static_scan.py) read the same ones."""
    return {task_id: labelled_migrations(find_task(task_id)) for task_id in UPSTREAM}


def longest_first(task_ids: list[str]) -> list[str]:
    """Tasks by their last validation's wall time per migration (a gold's cost, as CI grades only
    the gold of a task whose record holds), longest first: the suite builds references,
    then grades, two at a time in this order, so the longest never start last beside an idle core."""
    return sorted(task_ids, key=lambda t: validated.cost_per_migration(find_task(t)), reverse=True)


@pytest.fixture(scope="session")
def upstream_run(upstream_migrations: dict[str, list[Labelled]],
                 tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gpu2tpu.harness.evaluate import evaluate_predictions

    root = tmp_path_factory.mktemp("upstream")
    gold_only, whole = suites(UPSTREAM, "upstream")
    lines = [{"schema_version": 1, "task_id": m.task_id, "agent": m.agent, "patch": m.patch,
              "claimed_success": True}
             for task_id in longest_first(UPSTREAM) for m in upstream_migrations[task_id]
             if task_id in whole or (task_id in gold_only and m.agent == "gold")]
    preds = root / "preds.jsonl"
    preds.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # two at a time (references of different tasks side by side first, then candidates): the
    # suite's timing criteria are graded under load, and CI time stays well under its hour
    summary = evaluate_predictions(preds, "upstream", root / "runs", workers=2)
    assert not summary["errors"], summary["errors"]
    return root / "runs" / "upstream"
