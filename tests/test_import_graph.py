"""The packages form a layered graph: no import loop between them (function-level imports
included), and task.yaml and the labels are read in one module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"agent", "corpus", "harness", "judge", "leaderboard", "record", "sandbox", "tasks"}
TASK_DIR_NAME = re.compile(r".*__.*|.*-.*")  # tasks/<id>/ holds task code, not package modules


def _modules() -> dict[str, list[Path]]:
    """package -> its own modules (a task directory's code is not part of the tasks package)."""
    out: dict[str, list[Path]] = {}
    for pkg in PACKAGES:
        out[pkg] = [p for p in (ROOT / pkg).glob("*.py")]
    return out


def _imported_packages(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "gpu2tpu" and len(parts) > 1 and parts[1] in PACKAGES:
                found.add(parts[1])
    return found


def package_graph() -> dict[str, set[str]]:
    return {pkg: {dep for path in paths for dep in _imported_packages(path)} - {pkg}
            for pkg, paths in _modules().items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_loop_between_packages():
    graph = package_graph()
    assert _cycle(graph) is None, f"import loop: {' -> '.join(_cycle(graph) or [])}; graph {graph}"
    assert graph["tasks"] <= {"sandbox"}, graph["tasks"]  # tasks sit below corpus, harness, ...
    assert graph["sandbox"] == set(), graph["sandbox"]  # ... and the sandbox below everything


def test_record_judge_harness_are_layered():
    """Recording sits below judging (judge reads record's formats), judging below the front ends:
    nothing below harness imports it, and record never imports judge (so what a run records can
    not depend on how it is judged)."""
    graph = package_graph()
    below_harness = {"sandbox", "tasks", "corpus", "record", "judge"}
    assert all("harness" not in graph[p] for p in below_harness), graph
    assert graph["record"] <= {"sandbox", "tasks", "corpus"}, graph["record"]
    assert graph["judge"] <= {"record", "sandbox", "tasks", "corpus"}, graph["judge"]


def test_the_loop_finder_finds_a_loop():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_task_yaml_and_labels_are_read_in_one_module():
    """Only gpu2tpu.tasks.spec opens task.yaml or a label; everything else goes through it."""
    readers = []
    for path in sorted(ROOT.glob("*/*.py")):
        if path.parts[-2] not in PACKAGES or path.name == "spec.py" and path.parts[-2] == "tasks":
            continue
        text = path.read_text()
        if re.search(r"yaml\.safe_load\([^)]*(task\.yaml|\.yaml\"\)|with_suffix\(\"\.yaml\"\))", text) or \
                re.search(r"\"task\.yaml\"\)\.read_text", text):
            readers.append(path.relative_to(ROOT).as_posix())
    assert readers == [], f"task.yaml or labels read outside gpu2tpu.tasks.spec: {readers}"
