"""corpus/environment.py: the environment a project's own files state, on real pinned lines."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import yaml

from gpu2tpu.cli import main
from gpu2tpu.corpus.check import check_record
from gpu2tpu.corpus.environment import (
    ENV_KEYS,
    ENVIRONMENT,
    TarSource,
    environment_problems,
    extract,
)
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record
from gpu2tpu.corpus.source import DirSource

COMMIT = "0" * 40


def _env(tmp_path: Path, files: dict[str, str]) -> dict:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return extract(DirSource(tmp_path), COMMIT, "snapshot")


def _only(items: list[dict]) -> list[tuple[str, str]]:
    return [(next(iter(i.values())), i["where"]) for i in items]


def test_conda_environment_yml(tmp_path: Path) -> None:
    # zhouhaoyi/Informer2020 environment.yml lines 6 and 12
    env = _env(tmp_path, {"environment.yml": "name: informer\nchannels:\n  - pytorch\n"
                          "  - conda-forge\ndependencies:\n  - python=3.6\n  - numpy\n"
                          "  - pip\n  - pip:\n    - x\n  - cudatoolkit=10.2\n"
                          "  - pytorch==1.8.0\n"})
    assert sorted(env) == sorted(ENV_KEYS)
    assert _only(env["python"]) == [("3.6", "environment.yml:6")]
    assert _only(env["torch"]) == [("1.8.0", "environment.yml:12")]
    assert _only(env["cuda"]) == [("10.2", "environment.yml:11")]
    assert env["python"][0]["code"] == "- python=3.6"


def test_requirements_and_readme_prose(tmp_path: Path) -> None:
    # jaywalnut310/vits requirements.txt:8 and README.md:28, README.md:39
    env = _env(tmp_path, {
        "requirements.txt": "Cython==0.29.21\nlibrosa==0.8.0\nmatplotlib==3.3.1\nnumpy==1.18.5\n"
                            "phonemizer==2.2.1\nscipy==1.5.2\ntensorboard==2.3.0\ntorch==1.6.0\n",
        "README.md": "# VITS\n" * 27 + "0. Python >= 3.6\n" + "x\n" * 9 + "```sh\n"
                     "python setup.py build_ext --inplace\n```\n"})
    assert _only(env["torch"]) == [("1.6.0", "requirements.txt:8")]
    assert _only(env["python"]) == [(">=3.6", "README.md:28")]
    assert env["install"] == [{"command": "python setup.py build_ext --inplace",
                               "where": "README.md:39"}]
    assert env["flags"] == []


def test_readme_install_lines_and_cuda(tmp_path: Path) -> None:
    # microsoft/Swin-Transformer get_started.md:26, :30, :35
    lines = ["x"] * 40
    lines[25] = "conda create -n swin python=3.7 -y"
    lines[29] = "- Install `CUDA>=10.2` with `cudnn>=7` following"
    lines[34] = "conda install pytorch==1.8.0 torchvision==0.9.0 cudatoolkit=10.2 -c pytorch"
    env = _env(tmp_path, {"get_started.md": "\n".join(lines) + "\n"})
    assert _only(env["python"]) == [("3.7", "get_started.md:26")]
    assert _only(env["cuda"]) == [(">=10.2", "get_started.md:30"), ("10.2", "get_started.md:35")]
    assert _only(env["torch"]) == [("1.8.0", "get_started.md:35")]
    assert [i["where"] for i in env["install"]] == ["get_started.md:26", "get_started.md:35"]


def test_dockerfile_and_pyproject(tmp_path: Path) -> None:
    # vwxyzjn/cleanrl Dockerfile:1 and pyproject.toml:6; a nested pyproject ranks after the root
    env = _env(tmp_path, {
        "Dockerfile": "FROM nvidia/cuda:11.4.2-runtime-ubuntu20.04\n"
                      "RUN pip install poetry --upgrade\n",
        "pyproject.toml": "[tool.poetry]\nname = 'cleanrl'\n\n\n\nrequires-python = \">=3.8,<3.11\"\n",
        "cleanrl/ppo_trxl/pyproject.toml": "x\n" * 5 + "requires-python = \"~=3.10\"\n"})
    assert _only(env["cuda"]) == [("11.4.2", "Dockerfile:1")]
    assert _only(env["python"]) == [(">=3.8,<3.11", "pyproject.toml:6"),
                                    ("~=3.10", "cleanrl/ppo_trxl/pyproject.toml:6")]
    assert env["install"] == [{"command": "pip install poetry --upgrade",
                               "where": "Dockerfile:2"}]


def test_wheel_suffix_gives_cuda(tmp_path: Path) -> None:
    # vwxyzjn/cleanrl requirements/requirements-memory_gym.txt:157
    env = _env(tmp_path, {"requirements/requirements-memory_gym.txt": "torch==2.7.1+cu118\n"})
    assert _only(env["torch"]) == [("2.7.1", "requirements/requirements-memory_gym.txt:1")]
    assert _only(env["cuda"]) == [("11.8", "requirements/requirements-memory_gym.txt:1")]


def test_obsolete_flags(tmp_path: Path) -> None:
    # tkipf/pygcn README.md:22-23; jadore801120/attention-is-all-you-need-pytorch
    # requirements.txt:8; microsoft/Swin-Transformer models/build.py:21
    env = _env(tmp_path, {
        "README.md": "x\n" * 21 + "* PyTorch 0.4 or 0.5\n* Python 2.7 or 3.6\n",
        "requirements.txt": "tensorflow==1.14.0\n",
        "models/build.py": "import os\nfrom torch.utils.ffi import create_extension\n"
                           "import apex as amp\n",
        "install.md": "pip install mmcv-full==1.3.8\n"})
    flags = {f["stack"]: f["where"] for f in env["flags"]}
    assert flags == {"python2": "README.md:23", "torch<1.0": "README.md:22",
                     "torch.utils.ffi": "models/build.py:2", "tensorflow1": "requirements.txt:1",
                     "apex": "models/build.py:3", "mmcv-full": "install.md:1"}
    assert [f["stack"] for f in env["flags"]][0] == "python2"  # STACKS order


def test_no_false_flags_from_prose(tmp_path: Path) -> None:
    # microsoft/Swin-Transformer README.md:284: a news link, not a detectron2 build
    env = _env(tmp_path, {"README.md": "[04/14/2021] Swin for RetinaNet in Detectron: "
                          "https://github.com/xiaohu2015/SwinT_detectron2.\n"
                          "python3 -m pip uninstall tutel -y\n",
                          "setup.py": '    "https://github.com/NVIDIA/apex/pull/323#discussion"\n'})
    assert env["flags"] == [] and env["python"] == []


def test_tar_snapshot_source(tmp_path: Path) -> None:
    archive = tmp_path / "o__r.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"torch==1.6.0\n"
        info = tarfile.TarInfo("requirements.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    src = TarSource(archive, COMMIT)
    env = extract(src, COMMIT, "snapshot")
    src.close()
    assert _only(env["torch"]) == [("1.6.0", "requirements.txt:1")]


def test_shape_validation() -> None:
    good = {"extractor_version": "1", "commit": COMMIT, "tree": "mirror", "python": [],
            "torch": [{"version": "1.6.0", "where": "requirements.txt:8", "code": "torch==1.6.0"}],
            "cuda": [], "install": [], "flags": []}
    assert environment_problems(good, COMMIT) == []
    assert environment_problems(None, COMMIT) == []
    bad = dict(good, tree="disk", flags=[{"stack": "jax", "where": "a.py:1", "code": "x"}])
    fields = [f for f, _ in environment_problems(bad, "1" * 40)]
    assert fields == ["environment.commit", "environment.tree", "environment.flags[0].stack"]
    assert environment_problems({**good, "torch": [{"version": "1", "where": "x"}]}, COMMIT)


def test_command_fills_record_deterministically(tmp_path: Path) -> None:
    projects, sources = tmp_path / "projects", tmp_path / "sources"
    projects.mkdir()
    sources.mkdir()
    shutil.copy(PROJECTS_DIR / "tkipf__pygcn.yaml", projects)
    shutil.copy(PROJECTS_DIR / "CompVis__latent-diffusion.yaml", projects)  # no tree: no field
    with tarfile.open(sources / "tkipf__pygcn.tar.gz", "w:gz") as tar:
        data = b"x\n" * 21 + b"* PyTorch 0.4 or 0.5\n* Python 2.7 or 3.6\n"
        info = tarfile.TarInfo("README.md")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    argv = ["corpus", "environment", "--all", "--projects-dir", str(projects), "--sources",
            str(sources), "--mirror-root", str(tmp_path / "none")]
    assert main(argv) == 0
    first = (projects / "tkipf__pygcn.yaml").read_bytes()
    assert main(argv) == 0
    assert (projects / "tkipf__pygcn.yaml").read_bytes() == first
    rec = load_record(projects / "tkipf__pygcn.yaml")
    assert rec.data is not None
    env = rec.data[ENVIRONMENT]
    assert env["tree"] == "snapshot" and env["commit"] == rec.data["commit"]
    assert [f["stack"] for f in env["flags"]] == ["python2", "torch<1.0"]
    assert check_record(rec) == []
    text = first.decode()  # placed before scan:, so a rescan (scan appended last) keeps the bytes
    assert text.index("\nenvironment:\n") < text.index("\nscan:\n")
    other = yaml.safe_load((projects / "CompVis__latent-diffusion.yaml").read_text())
    assert ENVIRONMENT not in other
    assert (projects / "CompVis__latent-diffusion.yaml").read_bytes() == \
        (PROJECTS_DIR / "CompVis__latent-diffusion.yaml").read_bytes()
