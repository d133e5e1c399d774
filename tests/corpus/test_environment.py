"""corpus/environment.py: the environment a project's own files state, on real pinned lines."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from gpu2tpu.cli import main
from gpu2tpu.corpus.check import check_record
from gpu2tpu.corpus.environment import (
    ENV_KEYS,
    ENVIRONMENT,
    environment_problems,
    extract,
    open_tree,
)
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record
from gpu2tpu.corpus.source import DirSource, SourceError
from gpu2tpu.tasks.sources import sources_dir

COMMIT = "0" * 40


def _env(tmp_path: Path, files: dict[str, str], repo: str | None = None) -> dict:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return extract(DirSource(tmp_path), COMMIT, "snapshot", repo)


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


def test_version_before_a_full_stop_and_denied_versions(tmp_path: Path) -> None:
    # sfujim/TD3 README.md:6; quark0/darts README.md:14, :16; locuslab/TCN README.md:21
    env = _env(tmp_path, {
        "README.md": "x\n" * 5 + "Networks are trained using [PyTorch 1.2](https://github.com/"
                     "pytorch/pytorch) and Python 3.7. \n",
        "docs/INSTALL.md": "x\n" * 13 + "Python >= 3.5.5, PyTorch == 0.3.1, torchvision == 0.2.0\n"
                           "```\nNOTE: PyTorch 0.4 is not supported at this moment and would "
                           "lead to OOM.\n",
        "install_notes.md": "x\n" * 20 + "**Update**: The code should be directly runnable with "
                            "PyTorch v1.0.0 or above (PyTorch v>1.3.0 strongly recommended). The "
                            "older versions of PyTorch are no longer supported.\n"})
    assert _only(env["python"]) == [("3.7", "README.md:6"), (">=3.5.5", "docs/INSTALL.md:14")]
    assert _only(env["torch"]) == [("1.2", "README.md:6"), ("1.0.0", "install_notes.md:21"),
                                   ("0.3.1", "docs/INSTALL.md:14")]  # top-level files first


def test_conda_cuda_bound_and_install_comment(tmp_path: Path) -> None:
    # willisma/SiT environment.yml:9; wvangansbeke/Unsupervised-Classification README.md:64
    env = _env(tmp_path, {
        "environment.yml": "x\n" * 8 + "  - pytorch-cuda >=11.7\n",
        "README.md": "x\n" * 63 + "conda install matplotlib scipy scikit-learn   # For evaluation "
                     "and confusion matrix visualization\n"})
    assert _only(env["cuda"]) == [(">=11.7", "environment.yml:9")]
    assert env["install"] == [{"command": "conda install matplotlib scipy scikit-learn",
                               "where": "README.md:64"}]


def test_install_notes_one_folder_down_and_python_ranges(tmp_path: Path) -> None:
    # xingyizhou/CenterNet readme/INSTALL.md:10, :18, :21; NVlabs/edm environment.yml:6
    env = _env(tmp_path, {
        "readme/INSTALL.md": "x\n" * 9 + "    conda create --name CenterNet python=3.6\n"
                             + "x\n" * 7 + "1. Install pytorch0.4.1:\n\n    ~~~\n"
                             "    conda install pytorch=0.4.1 torchvision -c pytorch\n",
        "environment.yml": "x\n" * 5 + "  - python>=3.8, < 3.10  # package build failures on "
                           "3.10\n"})
    assert _only(env["python"]) == [(">=3.8,<3.10", "environment.yml:6"),
                                    ("3.6", "readme/INSTALL.md:10")]
    assert _only(env["torch"]) == [("0.4.1", "readme/INSTALL.md:18")]
    assert [i["where"] for i in env["install"]] == ["readme/INSTALL.md:10", "readme/INSTALL.md:21"]
    assert _only(env["flags"]) == [("torch<1.0", "readme/INSTALL.md:18")]


def test_poetry_classifiers_links_and_inline_installs(tmp_path: Path) -> None:
    # pranz24/pytorch-soft-actor-critic pyproject.toml:11, :14; MadryLab/datamodels setup.py:59;
    # mit-han-lab/temporal-shift-module README.md:50; Kaixhin/Rainbow README.md:48
    env = _env(tmp_path, {
        "pyproject.toml": "x\n" * 9 + "[tool.poetry.dependencies]\npython = \"^3.8\"\n"
                          "gym = \"^0.26.2\"\nnumpy = \"^1.24.0\"\ntorch = \"^2.0.0\"\n",
        "setup.py": "x\n" * 58 + "        'Programming Language :: Python :: 3.8',\n",
        "README.md": "x\n" * 47 + "To install all dependencies with Anaconda run `conda env create "
                     "-f environment.yml` and use `source activate rainbow` to activate the "
                     "environment.\n- [PyTorch](https://pytorch.org/) 1.0 or higher\n"})
    assert _only(env["python"]) == [("^3.8", "pyproject.toml:11"), ("3.8", "setup.py:59")]
    assert _only(env["torch"]) == [("^2.0.0", "pyproject.toml:14"), ("1.0", "README.md:49")]
    assert env["install"] == [{"command": "conda env create -f environment.yml",
                               "where": "README.md:48"}]


def test_tensorflow1_only_where_tf_is_tensorflow_itself(tmp_path: Path) -> None:
    # openai/guided-diffusion evaluations/evaluator.py:16, :37 (TF2's compat.v1: no flag);
    # yenchenlin/nerf-pytorch run_nerf.py:834 (in a string, no TensorFlow import: no flag);
    # princeton-nlp/SimCSE SentEval/examples/googleuse.py:13, :26 (TF1 itself: flagged)
    compat = _env(tmp_path / "a", {
        "evaluations/evaluator.py": "x\n" * 15 + "import tensorflow.compat.v1 as tf\n"
                                    + "x\n" * 20 + "    evaluator = Evaluator(tf.Session(config="
                                    "config))\n",
        "run_nerf.py": "import os, sys\n\"\"\"\n            with tf.contrib.summary."
                       "record_summaries_every_n_global_steps(args.i_print):\n\"\"\"\n"})
    assert compat["flags"] == []
    plain = _env(tmp_path / "b", {"SentEval/examples/googleuse.py": "x\n" * 12 + "import "
                                  "tensorflow as tf\n" + "x\n" * 12 + "session = tf.Session()\n"})
    assert _only(plain["flags"]) == [("tensorflow1", "SentEval/examples/googleuse.py:26")]
    # mit-han-lab/temporal-shift-module tsm_fpga/main_tf.py:11, :18: contrib is TF1 even so
    contrib = _env(tmp_path / "c", {"tsm_fpga/main_tf.py": "x\n" * 10 + "import tensorflow."
                                    "compat.v1 as tf\n" + "x\n" * 6 + "    import tensorflow."
                                    "contrib.decent_q\n"})
    assert _only(contrib["flags"]) == [("tensorflow1", "tsm_fpga/main_tf.py:18")]


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


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


# tkipf/pygcn README.md:22-23 at its pinned commit
PYGCN_README = "x\n" * 21 + "* PyTorch 0.4 or 0.5\n* Python 2.7 or 3.6\n"


@pytest.fixture
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    """A real commit, its bare mirror `o+r` and its snapshot `o__r.*` packed as the sources
    folder packs corpus projects; returns (sources, mirror root, commit)."""
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text(PYGCN_README)
    (repo / "requirements.txt").write_text("torch==1.6.0\n")
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x", cwd=repo)
    commit = _git("rev-parse", "HEAD", cwd=repo).strip()
    mirrors, sources = tmp_path / "mirrors", tmp_path / "sources"
    sources.mkdir()
    _git("clone", "-q", "--bare", str(repo), str(mirrors / "o+r"), cwd=tmp_path)
    (sources / "o__r.tree.tsv").write_text(_git("ls-tree", "-r", "-l", "--full-tree", commit,
                                                cwd=repo))
    (sources / "o__r.omitted.tsv").write_text("")
    _pack(sources / "o__r.tar.gz", {"README.md": PYGCN_README.encode(),
                                    "requirements.txt": b"torch==1.6.0\n"})
    return sources, mirrors, commit


def _pack(archive: Path, files: dict[str, bytes]) -> None:
    with tarfile.open(archive, "w:gz") as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _read(found: tuple | None) -> tuple[dict, str]:
    assert found is not None
    source, tree = found
    try:
        return extract(source, COMMIT, tree), tree
    finally:
        source.close()


def test_snapshot_is_verified_before_it_is_read(pinned: tuple[Path, Path, str]) -> None:
    sources, mirrors, commit = pinned
    env, tree = _read(open_tree("o__r", "o/r", commit, sources, mirrors))
    assert tree == "snapshot" and _only(env["python"]) == [("2.7", "README.md:23")]
    env, tree = _read(open_tree("o__r", "o/r", commit, None, mirrors))
    assert tree == "mirror" and _only(env["torch"]) == [("1.6.0", "requirements.txt:1"),
                                                        ("0.4", "README.md:22")]
    assert open_tree("o__r", "o/r", commit, None, sources) is None  # neither here: not read


def test_tampered_snapshot_is_refused(pinned: tuple[Path, Path, str]) -> None:
    sources, mirrors, commit = pinned
    _pack(sources / "o__r.tar.gz", {"README.md": PYGCN_README.replace("2.7", "3.9").encode(),
                                    "requirements.txt": b"torch==1.6.0\n"})
    with pytest.raises(SourceError, match=r"o__r\.tar\.gz refused: .*README\.md differs from the "
                                          r"pinned commit"):
        open_tree("o__r", "o/r", commit, sources, mirrors)
    # the listing rewritten to match the altered file no longer hashes to the commit's tree
    listing = (sources / "o__r.tree.tsv").read_text().splitlines()
    altered = PYGCN_README.replace("2.7", "3.9").encode()
    sha = subprocess.run(["git", "hash-object", "--stdin"], input=altered, check=True,
                         capture_output=True).stdout.decode().strip()
    (sources / "o__r.tree.tsv").write_text("\n".join(
        f"100644 blob {sha} {len(altered)}\tREADME.md" if line.endswith("\tREADME.md") else line
        for line in listing) + "\n")
    with pytest.raises(SourceError, match="does not hash to the pinned tree"):
        open_tree("o__r", "o/r", commit, sources, mirrors)


def test_snapshot_without_a_pin_or_listing_is_refused(pinned: tuple[Path, Path, str]) -> None:
    sources, mirrors, commit = pinned
    with pytest.raises(SourceError, match=r"no task pins commit .* fetch github:o/r into the "
                                          r"mirror root"):
        open_tree("o__r", "o/r", commit, sources, sources / "no-mirrors")
    (sources / "o__r.tree.tsv").unlink()
    with pytest.raises(SourceError, match=r"has no o__r\.tree\.tsv beside it"):
        open_tree("o__r", "o/r", commit, sources, mirrors)


# the snapshots: $GPU2TPU_SOURCES (as .ci/run sets it), or ../shared/sources beside the checkout
SHARED_SOURCES = sources_dir() or (Path(__file__).resolve().parents[3] / "shared" / "sources")


@pytest.mark.skipif(not (SHARED_SOURCES / "tkipf__pygcn.tar.gz").is_file(),
                    reason=f"no snapshots in {SHARED_SOURCES} (set $GPU2TPU_SOURCES)")
def test_real_snapshot_checked_against_its_task_pin(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU2TPU_CACHE", str(tmp_path / "cache"))
    rec = load_record(PROJECTS_DIR / "tkipf__pygcn.yaml").data
    assert rec is not None  # no mirror: the tree id comes from tasks/tkipf__pygcn/task.yaml
    env, tree = _read(open_tree(rec["id"], rec["repo"], rec["commit"], SHARED_SOURCES,
                                tmp_path / "no-mirrors"))
    assert tree == "snapshot"
    assert env["python"][0] == {"version": "2.7", "where": "README.md:23",
                                "code": "* Python 2.7 or 3.6"}


def test_command_fills_record_deterministically(pinned: tuple[Path, Path, str],
                                                tmp_path: Path) -> None:
    sources, mirrors, commit = pinned
    projects = tmp_path / "projects"
    projects.mkdir()
    pygcn = _without_environment(PROJECTS_DIR / "tkipf__pygcn.yaml")
    old_commit = yaml.safe_load(pygcn)["commit"]
    (projects / "o__r.yaml").write_text(pygcn.replace("tkipf__pygcn", "o__r")
                                        .replace("tkipf/pygcn", "o/r").replace(old_commit, commit))
    unread = projects / "CompVis__latent-diffusion.yaml"  # its tree is not here: no field
    unread.write_text(_without_environment(PROJECTS_DIR / unread.name))
    unread_bytes = unread.read_bytes()
    argv = ["corpus", "environment", "--all", "--projects-dir", str(projects), "--sources",
            str(sources), "--mirror-root", str(mirrors)]
    assert main(argv) == 0
    first = (projects / "o__r.yaml").read_bytes()
    assert main(argv) == 0
    assert (projects / "o__r.yaml").read_bytes() == first
    rec = load_record(projects / "o__r.yaml")
    assert rec.data is not None
    env = rec.data[ENVIRONMENT]
    assert env["tree"] == "snapshot" and env["commit"] == rec.data["commit"]
    assert [f["stack"] for f in env["flags"]] == ["python2", "torch<1.0"]
    assert check_record(rec) == []
    text = first.decode()  # placed before scan:, so a rescan (scan appended last) keeps the bytes
    assert text.index("\nenvironment:\n") < text.index("\nscan:\n")
    assert ENVIRONMENT not in yaml.safe_load(unread.read_text())
    assert unread.read_bytes() == unread_bytes


def _without_environment(record: Path) -> str:
    text = record.read_text()
    return text[:text.index("\nenvironment:\n") + 1] + text[text.index("\nscan:\n") + 1:]


def test_an_install_step_keeps_the_cd_before_it(tmp_path: Path) -> None:
    """Issue 43: an install line inside a sub-folder lost its `cd` (hyena-dna's flash-attention
    install read as the root's), and `git submodule update` steps were missed."""
    readme = "\n".join([
        "```bash",
        "git clone https://github.com/org/proj.git",
        "cd proj",                                        # the clone itself: still the root
        "pip install -r requirements.txt",
        "git submodule update --init",
        "cd flash-attention",
        "pip install -e . --no-build-isolation",
        "```",
        "```",
        "pip install -e .",                               # a new block starts at the root again
        "cd csrc/ln && pip install .  # optional",        # a cd in the line itself
        "```",
        "```python setup.py install```",                  # one-line code, not a fence
    ]) + "\n"
    env = _env(tmp_path, {"README.md": readme}, "org/proj")
    assert [i["command"] for i in env["install"]] == [
        "pip install -r requirements.txt", "git submodule update --init",
        "cd flash-attention && pip install -e . --no-build-isolation", "pip install -e .",
        "cd csrc/ln && pip install .", "python setup.py install"]



def test_a_commented_line_in_a_code_block_is_no_install(tmp_path: Path) -> None:
    # haotian-liu/LLaVA README.md:103-105: a troubleshooting hint, commented out
    readme = "```Shell\npip install -e .\n# please try the command below (without #)\n" \
             "# pip install flash-attn --no-build-isolation --no-cache-dir\n```\n"
    assert [i["command"] for i in _env(tmp_path, {"README.md": readme})["install"]] == \
        ["pip install -e ."]


def test_a_clone_then_install_chain_is_one_step(tmp_path: Path) -> None:
    # oxwhirl/pymarl docker/Dockerfile:39: the clone, the cd (absolute) and the install
    docker = "FROM ubuntu\nRUN git clone https://github.com/idsia/sacred.git /install/sacred && " \
             "cd /install/sacred && python3 setup.py install\nRUN cd /opt && pip install x\n"
    assert [i["command"] for i in _env(tmp_path, {"Dockerfile": docker})["install"]] == [
        "git clone https://github.com/idsia/sacred.git /install/sacred && cd /install/sacred && "
        "python3 setup.py install", "cd /opt && pip install x"]
