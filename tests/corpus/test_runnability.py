"""CPU runnability estimates: data kinds, model size, blockers and the verdict they give."""

from __future__ import annotations

from corpus_helpers import MIT, commit_files

from gpu2tpu.corpus import runnability
from gpu2tpu.corpus.scanner import scan_path


def test_dataset_kinds_and_standin_feasibility():
    got = {d["name"]: (d["kind"], d["standin_feasible"])
           for d in runnability.data_entries(["CIFAR-10", "ImageNet-1K", "Kinetics-400",
                                              "MuJoCo", "adding problem", "Some New Set"])}
    assert got == {"CIFAR-10": ("small", True), "ImageNet-1K": ("large", True),
                   "Kinetics-400": ("large", False), "MuJoCo": ("simulator", False),
                   "adding problem": ("synthetic", True), "Some New Set": ("medium", True)}


def test_verdicts_follow_blockers_and_work():
    small = {"datasets": ["Cora"], "paper_title": "GCN", "task": "node classification"}
    scan = {"cuda_only": {"hard": []}}
    ok = runnability.assess(small, scan, [], ["torch"])
    assert ok["cpu_task"] == "likely" and ok["reasons"] == [] and ok["model"]["size"] == "small"
    heavy = runnability.assess(small, scan, ["mujoco-py==2.1"], [])
    assert heavy["cpu_task"] == "possible"
    assert heavy["heavy_deps"] == [{"name": "mujoco_py", "why": "MuJoCo simulator (needs the C "
                                    "library)", "seen_in": "dependency file"}]
    llm = runnability.assess({"datasets": ["Alpaca"], "task": "finetune LLaMA-7B"}, scan, [], [])
    assert llm["cpu_task"] == "unlikely" and llm["model"]["size"] == "large"
    hard = runnability.assess(small, {"cuda_only": {"hard": ["flash_attn"]}}, [], [])
    assert hard["cpu_task"] == "unlikely"
    assert hard["reasons"] == ["hard CUDA-only code: flash_attn"]


def test_scanner_writes_the_block_from_curated_facts(tmp_path):
    commit_files(tmp_path / "r", {"LICENSE": MIT, "train.py": "import torch\nimport dgl\n"})
    scan = scan_path(tmp_path / "r", curated={"datasets": ["MNIST"], "task": "classify"})
    run = scan["runnability"]
    assert run["cpu_task"] == "possible" and run["heavy_deps"][0]["seen_in"] == "import"
    assert run["data"][0]["kind"] == "small" and run["hard_cuda_deps"] == []
