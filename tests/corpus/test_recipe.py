"""Recipes edit a tree on single anchored lines and fail loudly when an anchor does not fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu2tpu.tasks.recipe import RecipeError, apply_recipe


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text(
        "import torch\n\ndef main():\n    model = Net()\n    model.cuda()\n    return model\n")
    return root


def _recipe(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "gold.py"
    path.write_text("def apply(r):\n" + "".join(f"    {line}\n" for line in body.splitlines()))
    return path


def test_edits_keep_indentation(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    touched = apply_recipe(_recipe(tmp_path, "\n".join([
        'r.replace("pkg/train.py", "model.cuda()", "model.to(device)")',
        'r.insert_after("pkg/train.py", "import torch", ["import torch_xla"])',
        'r.insert_before("pkg/train.py", "model = Net()", ["device = torch_xla.device()", "if True:",'
        ' "    pass"])',
        'r.write("pkg/helper.py", "X = 1\\n")',
    ])), root)
    assert (root / "pkg" / "train.py").read_text() == (
        "import torch\nimport torch_xla\n\ndef main():\n    device = torch_xla.device()\n    if True:\n"
        "        pass\n    model = Net()\n    model.to(device)\n    return model\n")
    assert touched == ["pkg/train.py", "pkg/helper.py"]


@pytest.mark.parametrize("body, message", [
    ('r.replace("pkg/train.py", "model.cpu()", "x")', "found 0 times"),
    ('r.replace("pkg/missing.py", "x", "y")', "no such file"),
    ('r.write("pkg/train.py", "x")', "already exists"),
    ('r.replace("../outside.py", "x", "y")', "inside the tree"),
    ('r.no_such_edit("pkg/train.py")', "apply.r. failed .AttributeError"),
])
def test_bad_steps_are_named(tmp_path: Path, body: str, message: str) -> None:
    root = _tree(tmp_path)
    with pytest.raises(RecipeError, match=message):
        apply_recipe(_recipe(tmp_path, body), root)


def test_ambiguous_anchor_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "pkg" / "train.py").write_text("x = 1\nx = 1\n")
    with pytest.raises(RecipeError, match="found 2 times"):
        apply_recipe(_recipe(tmp_path, 'r.delete("pkg/train.py", "x = 1")'), root)


def test_repeated_line_replaced_by_occurrence(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "pkg" / "train.py").write_text("def a():\n    x = 1\n\ndef b():\n        x = 1\n")
    apply_recipe(_recipe(tmp_path, 'r.replace_each("pkg/train.py", "x = 1", ["y = 2", "z = 3"], 2, '
                                   'which=[2])'), root)
    assert (root / "pkg" / "train.py").read_text() == (
        "def a():\n    x = 1\n\ndef b():\n        y = 2\n        z = 3\n")
    apply_recipe(_recipe(tmp_path, 'r.replace_each("pkg/train.py", "x = 1", "w = 0", 1)'), root)
    assert (root / "pkg" / "train.py").read_text().startswith("def a():\n    w = 0\n")
    for body, message in (('r.replace_each("pkg/train.py", "y = 2", "v", 2)', "found 1 times"),
                          ('r.replace_each("pkg/train.py", "y = 2", "v", 1, which=[2])', "must lie in")):
        with pytest.raises(RecipeError, match=message):
            apply_recipe(_recipe(tmp_path, body), root)
