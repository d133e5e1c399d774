"""Every torch.load in task code (evaluate.py reads a checkpoint the graded code wrote) says
weights_only=True itself: a pickle from the candidate must not run code in the evaluator, and only
an explicit argument survives TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD (which awd-lstm's launcher sets)."""

from __future__ import annotations

import ast
from pathlib import Path

from gpu2tpu.tasks import TASKS_DIR


def torch_loads(path: Path) -> list[ast.Call]:
    calls = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "load" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "torch"):
            calls.append(node)
    return calls


def test_every_task_torch_load_is_weights_only() -> None:
    files = sorted(Path(TASKS_DIR).glob("**/*.py"))  # the kit evaluate.py loads with, and task code
    found = {p: torch_loads(p) for p in files}
    assert found[TASKS_DIR / "task_kit.py"], "the kit's load_state is where checkpoints are read"
    bad = [f"{p.relative_to(TASKS_DIR)}:{c.lineno}" for p, calls in found.items() for c in calls
           if not any(k.arg == "weights_only" and isinstance(k.value, ast.Constant) and k.value.value is True
                      for k in c.keywords)]
    assert bad == []
