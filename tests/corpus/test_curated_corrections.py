"""Issue 25: audited site corrections live in `curated.site_corrections` and survive a rescan.

Inputs are short snippets of haotian-liu/LLaVA (c121f04) and OpenLMLab/LOMO at their pinned
commits (file:line in the comments); the record tests read corpus/projects as committed.
"""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path

import pytest
from corpus_helpers import bare_mirror, commit_files, record, write_record

from gpu2tpu.cli import main
from gpu2tpu.corpus import PACKAGE_DIR, difficulty, gpu_deps, train_roots
from gpu2tpu.corpus.check import check_record
from gpu2tpu.corpus.cli import DEFAULT_MIRROR_ROOT
from gpu2tpu.corpus.records import (
    CORRECTED_KEY,
    PROJECTS_DIR,
    SITE_CORRECTIONS,
    CorrectionError,
    Record,
    apply_site_corrections,
    find_mirror,
    load_record,
)
from gpu2tpu.corpus.scanner import scan_path

AUDITED = ("haotian-liu__LLaVA", "HazyResearch__hyena-dna")
# fetch-style snapshots: $GPU2TPU_MIRROR_ROOT, the CLI's default, or this workplace's copy
MIRROR_ROOTS = [Path(p) for p in (os.environ.get("GPU2TPU_MIRROR_ROOT"), DEFAULT_MIRROR_ROOT,
                                  "/work/.mirror") if p]


def _data(rid: str) -> dict:
    rec = load_record(PROJECTS_DIR / f"{rid}.yaml")
    assert rec.data is not None, rec.error
    return rec.data


def _mirror_root(repo: str) -> Path | None:
    for root in MIRROR_ROOTS:
        try:
            find_mirror(repo, root)
        except FileNotFoundError:
            continue
        return root
    return None


@pytest.mark.parametrize("rid", AUDITED)
def test_a_forced_rescan_reproduces_the_audited_record(rid, tmp_path):
    repo = _data(rid)["repo"]
    root = _mirror_root(repo)
    if root is None:
        pytest.skip(f"no snapshot of {repo} (fetch github:{repo}; set GPU2TPU_MIRROR_ROOT)")
    copy_path = tmp_path / f"{rid}.yaml"
    shutil.copyfile(PROJECTS_DIR / f"{rid}.yaml", copy_path)
    assert main(["corpus", "scan", "--record", str(copy_path),
                 "--mirror-root", str(root)]) == 0
    assert copy_path.read_text() == (PROJECTS_DIR / f"{rid}.yaml").read_text()


def _unapplied(evidence: list[dict]) -> list[dict]:
    """The scanner's own rows, recovered from the committed ones (`corrected` says what it found;
    a corrected row's via is the correction's or, below hard, none)."""
    out = []
    for e in evidence:
        e = dict(e)
        if mark := e.pop(CORRECTED_KEY, None):
            found = mark.split()[1]
            if found == "none":
                continue
            e["status"] = found
            e.pop("via", None)
            if found == "hard":
                e["via"] = "train.py -> x.py"
        out.append(e)
    return out


@pytest.mark.parametrize("rid", AUDITED)
def test_the_corrections_turn_the_scanners_rows_into_the_committed_record(rid):
    data = _data(rid)
    scan = data["scan"]
    corrections = data["curated"][SITE_CORRECTIONS]
    evidence = scan["cuda_only"]["evidence"]
    marked = [e for e in evidence if CORRECTED_KEY in e]
    assert len(marked) == len(corrections) == 3
    assert {(e["name"], e["where"], e["status"]) for e in marked} == {
        (c["name"], c["where"], c["status"]) for c in corrections}
    # the launcher line the audit cites (LLaVA scripts/v1_5/pretrain.sh:3), from the snapshot
    texts = {"scripts/v1_5/pretrain.sh": "#!/bin/bash\n\ndeepspeed llava/train/train_mem.py \\\n"}
    assert apply_site_corrections(_unapplied(evidence), corrections, data["repo"],
                                  texts) == evidence
    assert scan["cuda_only"]["hard"] == gpu_deps.hard_names(evidence)
    want = difficulty.derive(scan)
    assert {k: scan[k] for k in want} == want


# haotian-liu/LLaVA llava/train/train.py:115-116, llava/train/train_mem.py:1-4 and
# scripts/v1_5/pretrain.sh:1-4 (abridged)
LLAVA = {
    "llava/train/train_mem.py": "from llava.train.train import train\n\n"
                                "if __name__ == \"__main__\":\n    train()\n",
    "llava/train/train.py": "import torch\n\n"
                            "def maybe_zero_3(param, ignore_status=False, name=None):\n"
                            "    from deepspeed import zero\n"
                            "    return param\n\n"
                            "def train(attn_implementation=None):\n    pass\n",
    "scripts/v1_5/pretrain.sh": "#!/bin/bash\n\ndeepspeed llava/train/train_mem.py \\\n"
                                "    --deepspeed ./scripts/zero2.json \\\n",
    "requirements.txt": "deepspeed==0.12.6\ntorch\n",
}
DS_IMPORT = {"name": "deepspeed", "where": "llava/train/train.py:4",
             "code": "from deepspeed import zero", "status": "hard",
             "reason": "every save runs maybe_zero_3 (llava/train/llava_trainer.py:243)"}
DS_LAUNCHER = {"name": "deepspeed", "where": "scripts/v1_5/pretrain.sh:3",
               "code": "deepspeed llava/train/train_mem.py \\", "status": "hard",
               "via": "scripts/v1_5/pretrain.sh (deepspeed launcher)",
               "reason": "the command launches through deepspeed (scripts/v1_5/pretrain.sh:3)"}


def _scan(tmp_path: Path, corrections: list[dict] | None) -> dict:
    if not (tmp_path / "r").exists():
        commit_files(tmp_path / "r", LLAVA)
    curated = {SITE_CORRECTIONS: corrections} if corrections is not None else {}
    return scan_path(tmp_path / "r", repo="o/llava", train_command="bash scripts/v1_5/pretrain.sh",
                     curated=curated)


def test_the_scanner_applies_corrections_before_deriving_the_tier(tmp_path):
    plain = _scan(tmp_path, None)
    assert [(e["where"], e["status"]) for e in plain["cuda_only"]["evidence"]] == [
        ("llava/train/train.py:4", "conditional")]
    assert plain["cuda_only"]["hard"] == [] and plain["tier"] < 3
    scan = _scan(tmp_path, [DS_IMPORT, DS_LAUNCHER])
    rows = scan["cuda_only"]["evidence"]
    assert [(e["where"], e["status"], e[CORRECTED_KEY]) for e in rows] == [
        ("llava/train/train.py:4", "hard", "scanner: conditional (curated.site_corrections[0])"),
        ("scripts/v1_5/pretrain.sh:3", "hard", "scanner: none (curated.site_corrections[1])")]
    assert rows[1]["via"] == DS_LAUNCHER["via"] and "via" not in rows[0]
    assert scan["cuda_only"]["hard"] == ["deepspeed"] == scan["runnability"]["hard_cuda_deps"]
    assert scan["tier"] == 3
    assert {k: scan[k] for k in difficulty.derive(scan)} == difficulty.derive(scan)


@pytest.mark.parametrize("change, says", [
    ({"where": "llava/train/train.py:5"}, "reports no site deepspeed at llava/train/train.py:5"),
    ({"code": "import deepspeed"}, "now reads 'from deepspeed import zero'"),
    ({"name": "apex"}, "reports no site apex at llava/train/train.py:4"),
    ({"where": "scripts/v1_5/pretrain.sh:2", "code": "deepspeed x.py"}, "reports no site"),
])
def test_a_correction_whose_site_is_gone_is_an_error(tmp_path, change, says):
    with pytest.raises(CorrectionError) as err:
        _scan(tmp_path, [{**DS_IMPORT, **change}])
    msg = str(err.value)
    assert msg.startswith("o/llava: curated.site_corrections[0]") and says in msg
    assert "update curated.site_corrections[0]" in msg and "or remove it" in msg


def test_the_cli_names_the_record_whose_correction_no_longer_fits(tmp_path, capsys):
    work = tmp_path / "w"
    sha = commit_files(work, LLAVA)
    bare_mirror(work, tmp_path / "mirror", "o/llava")
    rec = record("o/llava", sha)
    rec["curated"]["train_command"] = "bash scripts/v1_5/pretrain.sh"
    rec["curated"][SITE_CORRECTIONS] = [{**DS_IMPORT, "where": "llava/train/train.py:9"}]
    path = write_record(tmp_path / "projects", rec)
    before = path.read_text()
    args = ["corpus", "scan", "--all", "--force", "--projects-dir", str(tmp_path / "projects"),
            "--mirror-root", str(tmp_path / "mirror")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert f"{path.name}: FAILED: o/llava: curated.site_corrections[0]" in out
    assert "llava/train/train.py:9" in out and path.read_text() == before  # nothing written


def _checked(data: dict) -> list[str]:
    return check_record(Record(PROJECTS_DIR / "haotian-liu__LLaVA.yaml", data))


def test_check_validates_the_field():
    data = _data("haotian-liu__LLaVA")
    assert _checked(data) == []
    bad = copy.deepcopy(data)
    bad["curated"][SITE_CORRECTIONS] = [
        {"name": "deepspeed", "where": "train.py", "code": "x", "status": "required",
         "reason": "trust me", "why": "?"},
        "deepspeed hard",
        {**DS_IMPORT}, {**DS_IMPORT},
    ]
    got = "\n".join(_checked(bad))
    for want in ("site_corrections[0]: unknown key(s) why",
                 "site_corrections[0].status: must be one of hard, guarded, conditional, off_path",
                 "site_corrections[0].where: must be file:line",
                 "site_corrections[0].reason: must cite its evidence as file:line",
                 "site_corrections[1]: must be a mapping",
                 "site_corrections[3]: corrects the same site as [2]"):
        assert want in got, want
    not_a_list = copy.deepcopy(data)
    not_a_list["curated"][SITE_CORRECTIONS] = "deepspeed: hard"
    assert any("must be a list" in p for p in _checked(not_a_list))


def test_check_says_rescan_when_the_scan_does_not_show_a_correction():
    data = _data("haotian-liu__LLaVA")
    unapplied = copy.deepcopy(data)
    row = next(e for e in unapplied["scan"]["cuda_only"]["evidence"]
               if e["where"] == "llava/train/train.py:116")
    row["status"] = "conditional"
    problems = _checked(unapplied)
    assert len(problems) == 1 and "site_corrections[1]: deepspeed at llava/train/train.py:116 " \
        "is not applied" in problems[0] and "gpu2tpu corpus scan --record" in problems[0]
    dropped = copy.deepcopy(data)
    dropped["curated"][SITE_CORRECTIONS].pop(2)
    problems = _checked(dropped)
    assert len(problems) == 1 and "scripts/v1_5/pretrain.sh:3 is marked corrected" in problems[0]


def test_the_field_name_has_one_home():
    homes = [p.name for p in sorted(PACKAGE_DIR.glob("*.py"))
             if '"site_corrections"' in p.read_text(encoding="utf-8")]
    assert homes == ["records.py"]


def test_a_deepspeed_launcher_already_yields_its_script_as_root():
    """What made LLaVA's deepspeed conditional was not the launcher: the roots resolve through it
    (the imports sit in maybe_zero_3's body); the launcher itself is a correction's site."""
    py = {"llava/train/train_mem.py", "llava/train/train.py", "lomo/src/train_lomo.py"}
    texts = {"scripts/v1_5/pretrain.sh": LLAVA["scripts/v1_5/pretrain.sh"]}
    found = train_roots.training_roots("bash scripts/v1_5/pretrain.sh", py, texts, {})
    assert found.scripts == ["llava/train/train_mem.py"]
    # OpenLMLab/LOMO's recorded command (options before the script)
    found = train_roots.training_roots(
        "cd lomo && deepspeed --include localhost:0 src/train_lomo.py config/args_lomo.yaml",
        py, {}, {})
    assert found.scripts == ["lomo/src/train_lomo.py"]
