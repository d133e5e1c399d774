"""Issue 39: text before a patch's first header (or between files) is ignored by `git apply`, but
the static scan read every `-` line in it as code the original holds. Repeating each added line
there with a leading `-` made the scan see nothing. The harness now scans only what is applied
(harness/patch_hunks.py)."""

from __future__ import annotations

from pathlib import Path

from security_attacks import project_copy

from gpu2tpu.harness.patch_hunks import applied_part
from gpu2tpu.record.tamper_scan import added_lines, scan_patch
from gpu2tpu.record.workspace import apply_patch, diff_dirs, original_tree
from gpu2tpu.tasks.finder import find_task

HEAP_WALK = "import gc as _g\n_everything = _g.get_objects()\n"


def _blinded(tmp_path: Path) -> tuple[str, str]:
    """(the attack's patch, the same patch behind a preamble that repeats its added lines as `-`)."""
    spec = find_task("cifar_amp")
    proj = project_copy(spec, tmp_path / "attack")
    train = proj / "train.py"
    train.write_text(HEAP_WALK + train.read_text())
    patch = diff_dirs(spec.project_dir, proj)
    added = [ln[1:] for ln in patch.split("\n") if ln.startswith("+") and not ln.startswith("+++")]
    preamble = "Speed up the data path\n\n" + "".join(f"-{ln}\n" for ln in added) + "---\n"
    between = "\n".join(f"-{ln}" for ln in added)  # the same, between two files' diffs too
    first = patch.index("diff --git")
    return patch, preamble + patch[first:] + between + "\n"


def test_the_preamble_blinded_the_scan_of_the_raw_patch(tmp_path: Path) -> None:
    """The attack as it was: scanning the raw text finds nothing (the hole is real)."""
    spec = find_task("cifar_amp")
    _, blinded = _blinded(tmp_path)
    ws = apply_patch(spec, blinded)
    try:
        assert scan_patch(blinded, ws.project, original_tree(spec))["findings"] == []
    finally:
        ws.cleanup()


def test_the_applied_part_is_what_git_applies_and_the_scan_sees_the_attack(tmp_path: Path) -> None:
    spec = find_task("cifar_amp")
    patch, blinded = _blinded(tmp_path)
    part = applied_part(blinded)
    assert added_lines(part) == added_lines(patch)
    ws = apply_patch(spec, part)
    try:
        findings = scan_patch(part, ws.project, original_tree(spec))["findings"]
    finally:
        ws.cleanup()
    assert {f["rule"] for f in findings} == {"heap-walk"}, findings
    assert findings[0]["file"] == "train.py" and "get_objects" in findings[0]["code"]


def test_every_shipped_patch_is_its_own_applied_part() -> None:
    """A patch with nothing outside its headers and hunks passes through unchanged: every labelled
    migration shipped as a patch, and a patch with a missing final newline."""
    patches = sorted((Path(__file__).resolve().parents[2] / "tasks").glob("*/migrations/**/*.patch"))
    assert len(patches) > 40  # the practice tasks: upstream tasks ship recipes, materialised
    for path in patches:
        text = path.read_bytes().decode()
        assert applied_part(text) == text, path
    no_eol = ("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n"
              "\\ No newline at end of file\n+a = 2\n\\ No newline at end of file\n")
    assert applied_part(no_eol) == no_eol
    assert applied_part("notes\n-x = 1\n" + no_eol) == no_eol
