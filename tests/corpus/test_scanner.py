"""The static scanner on real git repositories built in tmp_path."""

from __future__ import annotations

import json

import pytest
import yaml
from corpus_helpers import (
    MIT,
    TIER0,
    bare_mirror,
    commit_files,
    git,
    record,
    write_record,
)

from gpu2tpu.cli import main
from gpu2tpu.corpus import difficulty
from gpu2tpu.corpus.patterns import detect_licence
from gpu2tpu.corpus.scanner import SCANNER_VERSION, scan_path
from gpu2tpu.corpus.source import SourceError


def test_tiers_zero_to_three(tier_repos):
    scans = {t: scan_path(path) for t, (path, _sha) in tier_repos.items()}
    assert [scans[t]["tier"] for t in range(4)] == [0, 1, 2, 3]
    for t, (_path, sha) in tier_repos.items():
        assert scans[t]["commit"] == sha
        assert scans[t]["commit_date"] == "2024-01-02T03:04:05+00:00"
        assert scans[t]["scanner_version"] == SCANNER_VERSION
        assert scans[t]["score"] >= difficulty.TIER_FLOOR[t]
        assert scans[t]["bucket"] == difficulty.bucket_of(scans[t]["score"])
    # scores grow with the tier on these examples
    assert [scans[t]["score"] for t in range(4)] == sorted(scans[t]["score"] for t in range(4))


def test_tier0_details(tier_repos):
    scan = scan_path(tier_repos[0][0])
    assert scan["licence"] == {"spdx": "MIT", "permissive": True, "file": "LICENSE"}
    assert scan["dependencies"] == {"files": ["requirements.txt"], "pinned": {"torch": "2.1.0"}}
    assert scan["frameworks"]["torch"] == 1 and scan["frameworks"]["tensorflow"] == 0
    assert scan["entry_points"]["train"] == ["train.py"]
    assert scan["size"]["python_files"] == 1 and scan["size"]["python_lines"] == 9
    assert all(v == 0 for k, v in scan["counts"].items())
    assert scan["cuda_only_deps"] == [] and scan["bucket"] == "easy"


def test_tier1_counts_ignore_comments(tier_repos):
    scan = scan_path(tier_repos[1][0])
    c = scan["counts"]
    assert c["cuda_call"] == 1  # the commented-out .cuda() is not counted
    assert c["cuda_string"] == 1 and c["cudnn_flags"] == 1 and c["torch_cuda"] == 1
    assert c["item"] == 1
    assert scan["licence"]["spdx"] == "Apache-2.0"
    assert scan["entry_points"] == {"train": ["train.py"], "eval": ["eval.py"]}
    assert "hardcoded_cuda" in scan["flags"] and "host_sync_item" in scan["flags"]


def test_tier2_precision_distribution_hazards(tier_repos):
    scan = scan_path(tier_repos[2][0])
    c = scan["counts"]
    assert c["grad_scaler"] == 1 and c["autocast"] >= 1 and c["torch_compile"] == 1
    assert c["distributed"] >= 2 and c["half_precision"] == 1
    assert c["nonzero"] == 1 and c["bool_mask_index"] == 2 and c["unique"] == 1
    assert scan["licence"] == {"spdx": "GPL-3.0", "permissive": False, "file": "LICENSE"}
    assert scan["dependencies"]["pinned"] == {"python": "3.8", "pytorch": "1.7.1",
                                              "timm": "0.4.12"}
    assert scan["entry_points"]["train"] == ["main.py"]
    assert {"amp", "distributed", "torch_compile", "dynamic_shapes", "non_permissive",
            "old_torch_pin"} <= set(
        scan["flags"])


def test_tier3_kernels_and_cuda_only_packages(tier_repos):
    scan = scan_path(tier_repos[3][0])
    assert scan["size"]["cuda_files"] == 1 and scan["size"]["cpp_files"] == 1
    assert scan["cuda_only_deps"] == ["apex", "bitsandbytes", "flash_attn", "xformers"]
    assert scan["counts"]["cpp_extension"] >= 2
    assert {"custom_cuda_kernels", "cpp_extension", "cuda_only_deps"} <= set(scan["flags"])
    assert scan["dependencies"]["pinned"] == {"xformers": "0.0.22"}
    assert scan["score"] >= difficulty.TIER_FLOOR[3] + 10  # kernels and packages add to the floor


def test_a_listed_but_unimported_cuda_only_package_is_not_tier3(tmp_path):
    path = tmp_path / "r"
    commit_files(path, {"LICENSE": MIT, "train.py": "import torch\n",
                        "requirements.txt": "mamba-ssm==1.2.0\n"})
    scan = scan_path(path)
    assert scan["tier"] == 0 and scan["cuda_only_deps"] == ["mamba_ssm"]
    assert scan["cuda_only"]["evidence"] == [
        {"name": "mamba_ssm", "status": "declared", "where": "", "code": ""}]
    commit_files(path, {"train.py": "import torch\nimport mamba_ssm\n"})
    assert scan_path(path)["tier"] == 3


def test_bare_mirror_older_commit_and_missing_commit(tmp_path):
    work = tmp_path / "work"
    first = commit_files(work, TIER0)
    commit_files(work, {"train.py": TIER0["train.py"] + "x = x.cuda()\n"})
    mirror = bare_mirror(work, tmp_path / "mirror", "alice/proj")
    head = scan_path(mirror.parent)  # the <owner>+<name> folder is enough
    old = scan_path(mirror, first)
    assert head["repo"] == old["repo"] == "alice/proj"
    assert head["tier"] == 1 and old["tier"] == 0 and old["commit"] == first
    with pytest.raises(SourceError, match="not found"):
        scan_path(mirror, "0" * 40)


def test_plain_directory_and_commit_refused(tmp_path):
    plain = tmp_path / "plain"
    for rel, text in TIER0.items():
        (plain / rel).parent.mkdir(parents=True, exist_ok=True)
        (plain / rel).write_text(text)
    scan = scan_path(plain, repo="x/y")
    assert scan["commit"] is None and scan["tier"] == 0 and scan["licence"]["spdx"] == "MIT"
    with pytest.raises(SourceError, match="not a git directory"):
        scan_path(plain, "a" * 40)


def test_absent_blob_is_counted_not_fatal(tmp_path):
    work = tmp_path / "w"
    commit_files(work, {**TIER0, "big.py": "x = 1\n" * 10, "data.bin": "0" * 99})
    for name in ("big.py", "data.bin"):  # like a snapshot without its largest files
        sha = git(work, "rev-parse", f"HEAD:{name}")
        (work / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    scan = scan_path(work)
    assert scan["missing_blobs"] == 2 and scan["missing_scanned_blobs"] == 1
    assert "incomplete_scan" in scan["flags"]
    assert scan["size"]["python_files"] == 2 and scan["size"]["python_lines"] == 9


@pytest.mark.parametrize("text,spdx,permissive", [
    (MIT, "MIT", True),
    ("BSD 3-Clause License\nRedistribution and use in source and binary forms, with or without "
     "modification...\n3. Neither the name of the copyright holder", "BSD-3-Clause", True),
    ("Redistribution and use in source and binary forms, with or without", "BSD-2-Clause", True),
    ("Attribution-NonCommercial 4.0 International", "CC-BY-NC-4.0", False),
    ("GNU AFFERO GENERAL PUBLIC LICENSE Version 3", "AGPL-3.0", False),
    ("GNU GENERAL PUBLIC LICENSE Version 3, 29 June 2007 ... " + "x " * 200 + "13. Use with the "
     "GNU Affero General Public License ... use the GNU Lesser General Public License instead",
     "GPL-3.0", False),
    ("GNU LESSER GENERAL PUBLIC LICENSE Version 3, 29 June 2007", "LGPL-3.0", False),
    ("Copyright 2020. All rights reserved.", "LicenseRef-all-rights-reserved", False),
    ("some words nobody recognises", "LicenseRef-unknown", False),
    ("SPDX-License-Identifier: Apache-2.0", "Apache-2.0", True),
    ("The code is licensed under [Apache 2.0](LICENSE.a); weights: CC-BY-NC 4.0", "Apache-2.0",
     True),
])
def test_licence_detection(text, spdx, permissive):
    assert detect_licence(text) == (spdx, permissive)


def test_unrecognised_licence_file_falls_back_to_the_next(tmp_path):
    path = tmp_path / "r"
    commit_files(path, {"LICENSE": "See the other files.\n", "LICENSE.code": MIT,
                        "train.py": "import torch\n"})
    assert scan_path(path)["licence"] == {"spdx": "MIT", "permissive": True,
                                          "file": "LICENSE.code"}


def test_no_licence_flag(tmp_path):
    path = tmp_path / "r"
    commit_files(path, {"train.py": "import torch\n"})
    scan = scan_path(path)
    assert scan["licence"]["spdx"] is None and "no_licence" in scan["flags"]


def test_cli_scan_json(tier_repos, capsys):
    assert main(["corpus", "scan", str(tier_repos[2][0]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tier"] == 2


def test_scan_record_in_place_keeps_other_bytes(tmp_path, capsys):
    work = tmp_path / "w"
    sha = commit_files(work, TIER0)
    bare_mirror(work, tmp_path / "mirror", "bob/proj")
    path = write_record(tmp_path / "projects", record("bob/proj", sha))
    before = path.read_text()
    args = ["corpus", "scan", "--record", str(path), "--mirror-root", str(tmp_path / "mirror")]
    assert main(args) == 0
    after = path.read_text()
    assert after.startswith(before) and "\nscan:\n" in after
    data = yaml.safe_load(after)
    assert data["scan"]["commit"] == sha and data["scan"]["tier"] == 0
    assert main(args) == 0  # rescanning replaces the block, never duplicates it
    assert path.read_text() == after
    assert "bob/proj: tier 0" in capsys.readouterr().out


def test_scan_all_progress_and_skips_current(tmp_path, capsys):
    mirror = tmp_path / "mirror"
    projects = tmp_path / "projects"
    for i, files in enumerate((TIER0, {**TIER0, "x.py": "y = z.cuda()\n"})):
        work = tmp_path / f"w{i}"
        sha = commit_files(work, files)
        bare_mirror(work, mirror, f"o{i}/p")
        write_record(projects, record(f"o{i}/p", sha))
    write_record(projects, record("nobody/absent", "a" * 40))
    argv = ["corpus", "scan", "--all", "--projects-dir", str(projects),
            "--mirror-root", str(mirror)]
    assert main(argv) == 1  # one record has no snapshot
    out = capsys.readouterr().out
    assert "3 of 3 records to scan" in out and "[1/3]" in out and "[3/3]" in out
    assert "nobody__absent.yaml: FAILED" in out and "scanned 2 record(s) in" in out
    assert main(argv) == 1
    assert "1 of 3 records to scan" in capsys.readouterr().out  # the scanned two are current


def test_scanner_never_runs_code(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "r"
    evil = f"open({str(marker)!r}, 'w').write('x')\n"
    commit_files(path, {"setup.py": evil, "train.py": evil, "conftest.py": evil})
    scan_path(path)
    assert not marker.exists()


def test_entry_points(tmp_path):
    path = tmp_path / "r"
    commit_files(path, {
        "LICENSE": MIT,
        "finetune_lm.py": "import torch\n",  # named like a training script
        "tools/run_glue.py": "print(1)\n",
        "configs/train_big.py": "lr = 0.1\n",  # a config, not a script
        "hf.py": "from transformers import Trainer\nif __name__ == '__main__':\n"
                 "    Trainer(model=None).train()\n",
        "lib/util.py": "def f(loss):\n    loss.backward()\n",  # no __main__ guard
        "evaluate.py": "import torch\n", "tests/test_model.py": "def test(): pass\n",
    })
    entry = scan_path(path)["entry_points"]
    assert entry == {"train": ["finetune_lm.py", "hf.py", "tools/run_glue.py"],
                     "eval": ["evaluate.py"]}
