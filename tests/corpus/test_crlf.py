"""CRLF source files survive recipes, diffs and patches byte for byte (snap-stanford/KGReasoning's
files end their lines with \\r\\n: a recipe must not rewrite them LF, nor a diff drop the \\r)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gpu2tpu.record.workspace import apply_patch
from gpu2tpu.tasks.materialise import diff_dirs, materialise, migration_patch, write_patch
from gpu2tpu.tasks.recipe import RecipeError, apply_recipe
from gpu2tpu.tasks.sources import SOURCES_ENV, Pin, materialise_source
from gpu2tpu.tasks.spec import RunSpec, load_spec

TRAIN = (b"import torch\r\n\r\ndef main():\r\n    model = Net()\r\n    model.cuda()\r\n    x.cuda()\r\n"
         b"    x.cuda()\r\n    del_me = 1\r\n    return model\r\n")
MIXED = b"a = 1\r\nb = 2\nc = 3\r\nd\x0ce = 4\nf = 5\rg = 6\r\n"  # \x0c and a lone \r are not line ends
TAIL = b"x = 1\r\ny = 2"  # CRLF, last line without an ending

# the KGReasoning commit that snapshot pins (task.yaml of the draft on branch pending-tasks)
KG = Pin("snap-stanford__KGReasoning", "snap-stanford/KGReasoning",
         "ec728497f083973edbe8b9e3c4066f416fc74250", "11b68534f096a875e06dc9c57097a206a18b5986")
SHARED_SOURCES = Path(os.environ.get(SOURCES_ENV) or
                      Path(__file__).resolve().parents[3] / "shared" / "sources").resolve()


def _tree(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, data in (("train.py", TRAIN), ("mixed.py", MIXED), ("tail.py", TAIL)):
        (root / name).write_bytes(data)
    return root


def _recipe(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "recipe.py"
    path.write_text("def apply(r):\n" + "".join(f"    {line}\n" for line in body.splitlines()))
    return path


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _practice_task(tmp_path: Path, project: Path, patch: str) -> RunSpec:
    """A minimal practice task whose project/ is `project` and whose gold.patch is `patch`."""
    task = tmp_path / "task"
    shutil.copytree(project, task / "project", symlinks=True)
    (task / "migrations").mkdir()
    write_patch(task / "migrations" / "gold.patch", patch)
    (task / "task.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "task_id": "crlf", "title": "t", "description": "d", "command": ["train.py"],
        "seed": 0, "steps": 1, "checkpoint": None, "protected": [],
        "goal": {"metric": "m", "higher_is_better": True, "tolerance": 0.1}}))
    return load_spec(task)


EDITS = """\
r.insert_after("train.py", "import torch", ["import torch_xla"])
r.replace("train.py", "model.cuda()", ["device = torch_xla.device()", "model.to(device)"])
r.replace_each("train.py", "x.cuda()", "x.to(device)", 2)
r.insert_before("train.py", "return model", ["if True:", "    pass", ""])
r.delete("train.py", "del_me = 1")
r.insert_after("mixed.py", "b = 2", ["b2 = 2"])
r.insert_after("mixed.py", "c = 3", ["c2 = 3"])
r.replace("mixed.py", "a = 1", "a = 0")
r.insert_after("tail.py", "y = 2", ["z = 3"])
r.write("new.py", "n = 1\\n")"""


def test_recipe_edits_keep_each_lines_own_ending(tmp_path: Path) -> None:
    root = _tree(tmp_path / "tree")
    apply_recipe(_recipe(tmp_path, EDITS), root)
    assert (root / "train.py").read_bytes() == (
        b"import torch\r\nimport torch_xla\r\n\r\ndef main():\r\n    model = Net()\r\n"
        b"    device = torch_xla.device()\r\n    model.to(device)\r\n    x.to(device)\r\n    x.to(device)\r\n"
        b"    if True:\r\n        pass\r\n\r\n    return model\r\n")
    assert (root / "mixed.py").read_bytes() == (
        b"a = 0\r\nb = 2\nb2 = 2\nc = 3\r\nc2 = 3\r\nd\x0ce = 4\nf = 5\rg = 6\r\n")
    assert (root / "tail.py").read_bytes() == b"x = 1\r\ny = 2\r\nz = 3\r\n"
    assert (root / "new.py").read_bytes() == b"n = 1\n"


def test_an_anchor_is_a_whole_line_between_newlines(tmp_path: Path) -> None:
    root = _tree(tmp_path / "tree")
    for anchor in ("e = 4", "g = 6"):  # str.splitlines() would cut lines at \x0c and at a lone \r
        with pytest.raises(RecipeError, match="found 0 times"):
            apply_recipe(_recipe(tmp_path, f'r.delete("mixed.py", "{anchor}")'), root)
    assert (root / "mixed.py").read_bytes() == MIXED


def test_diff_keeps_carriage_returns_and_applies_back_byte_for_byte(tmp_path: Path) -> None:
    original = _tree(tmp_path / "original")
    edited = tmp_path / "edited"
    shutil.copytree(original, edited)
    apply_recipe(_recipe(tmp_path, EDITS), edited)
    patch = diff_dirs(original, edited)
    assert "+import torch_xla\r\n" in patch and "-    del_me = 1\r\n" in patch
    removed = [ln for ln in patch.split("\n") if ln.startswith("-") and not ln.startswith("---")]
    assert removed == ["-a = 1\r", "-y = 2", "-    model.cuda()\r",
                       "-    x.cuda()\r", "-    x.cuda()\r", "-    del_me = 1\r"]  # the edited lines only
    spec = _practice_task(tmp_path, original, patch)
    assert migration_patch(spec, "gold") == patch  # the .patch file read back with its \r
    assert _tree_bytes(materialise(spec, tmp_path / "applied", "gold")) == _tree_bytes(edited)
    ws = apply_patch(spec, patch)  # the evaluation's apply path
    try:
        assert _tree_bytes(ws.project) == _tree_bytes(edited)
    finally:
        ws.cleanup()


def test_a_patch_applies_to_a_tree_inside_another_repository(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"  # e.g. `gpu2tpu tasks materialise ... --to` a folder of one's own checkout
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    original = _tree(tmp_path / "original")
    edited = tmp_path / "edited"
    shutil.copytree(original, edited)
    apply_recipe(_recipe(tmp_path, EDITS), edited)
    spec = _practice_task(tmp_path, original, diff_dirs(original, edited))
    assert _tree_bytes(materialise(spec, repo / "sub" / "applied", "gold")) == _tree_bytes(edited)


def test_a_users_autocrlf_does_not_change_the_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    original = _tree(tmp_path / "original")
    edited = tmp_path / "edited"
    shutil.copytree(original, edited)
    (edited / "train.py").write_bytes(TRAIN.replace(b"model.cuda()", b"model.to(device)"))
    assert diff_dirs(original, edited).count("\r\n") == 3 + 3 + 2  # context, context, - and +


@pytest.mark.skipif(not (SHARED_SOURCES / f"{KG.id}.tar.gz").is_file(),
                    reason=f"no {KG.id} snapshot in {SHARED_SOURCES} (set {SOURCES_ENV})")
def test_kgreasoning_crlf_files_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    source = materialise_source(KG, SHARED_SOURCES)  # verified against the pinned tree
    assert (source / "main.py").read_bytes().count(b"\r\n") > 400
    edited = tmp_path / "edited"
    shutil.copytree(source, edited, symlinks=True)
    apply_recipe(_recipe(tmp_path, "\n".join([
        'r.insert_after("main.py", "import torch", ["import torch_xla"])',
        'r.replace("models.py", "offset_embedding = torch.zeros_like(embedding).cuda()",'
        ' "offset_embedding = torch.zeros_like(embedding)")'])), edited)
    for name in ("main.py", "models.py"):
        data = (edited / name).read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n")  # still CRLF throughout
    patch = diff_dirs(source, edited)
    added = [ln for ln in patch.split("\n") if ln.startswith("+") and not ln.startswith("+++")]
    assert added == ["+import torch_xla\r",
                     "+" + " " * 20 + "offset_embedding = torch.zeros_like(embedding)\r"]
    spec = _practice_task(tmp_path, source, patch)
    assert _tree_bytes(materialise(spec, tmp_path / "applied", "gold")) == _tree_bytes(edited)
