"""Helpers for corpus tests: real git repositories and small record trees (no fixtures here)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
}

MIT = ("MIT License\n\nCopyright (c) 2024 X\n\n"
       "Permission is hereby granted, free of charge, to any "
       "person obtaining a copy\nof this software ...\n")
APACHE = "Apache License\n   Version 2.0, January 2004\n"
GPL3 = "  GNU GENERAL PUBLIC LICENSE\n   Version 3, 29 June 2007\n"


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], env=GIT_ENV, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def commit_files(repo: Path, files: dict[str, str], message: str = "c") -> str:
    """Write files into a work tree (creating the repo if needed), commit, return the sha."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", "main")
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def bare_mirror(work: Path, mirror_root: Path, repo: str) -> Path:
    """A bare clone laid out as `fetch` does: <root>/<owner>+<name>/repo."""
    dest = mirror_root / repo.replace("/", "+") / "repo"
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(dest)], env=GIT_ENV,
                   check=True, capture_output=True)
    return dest


def record(repo: str, commit: str, split: str = "main", domain: str = "vision",
           **curated: Any) -> dict[str, Any]:
    cur = {
        "paper_title": "A Paper", "paper_url": "https://arxiv.org/abs/2101.00001",
        "paper_year": 2021, "domain": domain, "task": "image classification",
        "datasets": ["CIFAR-10"], "train_command": "python train.py",
        "licence_seen": "MIT",
        "reported_results": [{"metric": "top1_accuracy", "value": 76.1, "dataset": "CIFAR-10",
                              "config": "ResNet-18, CIFAR-10"}],
        "command_result": {"config": "ResNet-18, CIFAR-10", "row": 0,
                           "why": "README.md:12 gives 76.1 for this command"},
        "hardness_notes": [],
    }
    cur.update(curated)
    return {"schema_version": 1, "id": repo.replace("/", "__"), "repo": repo, "commit": commit,
            "split": split, "curated": cur}


def write_record(projects: Path, rec: dict[str, Any]) -> Path:
    projects.mkdir(parents=True, exist_ok=True)
    path = projects / f"{rec['id']}.yaml"
    path.write_text(yaml.safe_dump(rec, sort_keys=False))
    return path


def write_considered(curation: Path, rows: list[tuple[str, str, str, str]],
                     letter: str = "A") -> Path:
    curation.mkdir(parents=True, exist_ok=True)
    path = curation / f"considered-{letter}.tsv"
    lines = ["repo\tdecision\treason\tdetail"] + ["\t".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


# Small synthetic projects, one per tier.
TIER0 = {
    "LICENSE": MIT,
    "train.py": "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(2, 1)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for _ in range(3):\n    loss = model(torch.randn(4, 2)).sum()\n    loss.backward()\n"
    "    opt.step()\n",
    "requirements.txt": "torch==2.1.0\nnumpy>=1.20\n",
}
TIER1 = {
    "LICENSE": APACHE,
    "train.py": "import torch\n# x = x.cuda()  commented out: must not count\n"
    "device = torch.device('cuda')\nmodel = torch.nn.Linear(2, 1).cuda()\n"
    "torch.backends.cudnn.benchmark = True\nloss = model(torch.randn(4, 2)).sum()\n"
    "loss.backward()\nprint(loss.item())\n",
    "eval.py": "import torch\nprint(torch.cuda.is_available())\n",
}
TIER2 = {
    "LICENSE": GPL3,
    "main.py": "import torch\nimport torch.distributed as dist\n"
    "from torch.nn.parallel import DistributedDataParallel as DDP\n"
    "scaler = torch.cuda.amp.GradScaler()\nwith torch.autocast('cuda', dtype=torch.float16):\n"
    "    pass\nmodel = torch.compile(torch.nn.Linear(2, 2))\n"
    "idx = torch.nonzero(x)\ny = x[x > 0]\nz = x[mask]\nu = torch.unique(x)\n"
    "if __name__ == '__main__':\n    loss.backward()\n    opt.step()\n",
    "environment.yml": "dependencies:\n  - python=3.8\n  - pytorch=1.7.1\n  - pip:\n"
    "    - timm==0.4.12\n",
}
TIER3 = {
    "LICENSE": MIT,
    "train.py": "import torch\nfrom apex import amp\nimport flash_attn\n"
    "from torch.utils.cpp_extension import load\nx = x.cuda()\n",
    "ops/kernel.cu": "__global__ void k() {}\n",
    "ops/kernel.cpp": "// binding\n",
    "setup.py": "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
    "setup(name='ops', install_requires=['xformers==0.0.22', 'numpy'])\n",
    "requirements.txt": "git+https://github.com/NVIDIA/apex.git\nbitsandbytes\n",
}

TASK = {
    "schema_version": 1, "task_id": "toy", "title": "Toy", "description": "d",
    "command": ["train.py", "--steps", "4"], "seed": 0, "seed_arg": "--seed",
    "reference_seeds": [1, 2], "steps": 4, "target_chips": 1, "precision_policy": "fp32",
    "protected": ["data.py"], "checkpoint": "ckpt.pt",
    "goal": {"metric": "accuracy", "higher_is_better": True, "tolerance": 0.05},
    "performance": {"warmup_steps": 3, "compile_allowance": 2, "host_sync_allowance": 0.1,
                    "step_time_budget": 3.0},
    "fallback_allowlist": [], "timeout_s": 300,
}
