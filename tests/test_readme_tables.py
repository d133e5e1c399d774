"""The README's tables of tasks are what `gpu2tpu tasks table` prints from the task folders (each
task's title, hazards, broken migrations with their labelled category, alternatives): they cannot
drift from the tasks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpu2tpu.tasks_cli import markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("kind", ["practice", "upstream"])
def test_readme_table_is_the_generated_one(kind: str) -> None:
    start = f"<!-- gpu2tpu tasks table --kind {kind} -->"
    match = re.search(re.escape(start) + r"\n(.*?)\n<!-- end -->", README.read_text(), re.S)
    assert match, f"README.md has no block opened by {start!r}"
    assert match.group(1).strip() == markdown_table(kind), \
        f"README.md's {kind} table is stale: paste `gpu2tpu tasks table --kind {kind}` between the markers"
