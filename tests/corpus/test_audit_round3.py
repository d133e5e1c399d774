"""Issue 25 (corpus, round 3): the audited records and the run-time compile-call rule.

Inputs are short snippets of the projects at their pinned commits (quoted as facts, file:line in
the comments); the record tests read corpus/projects as committed.
"""

from __future__ import annotations

import re
import shlex

import pytest

from gpu2tpu.corpus import difficulty, gpu_deps, patterns
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record, load_records


def _sites(files: dict[str, str], roots: list[str], name: str) -> list[tuple[str, str]]:
    ev = gpu_deps.analyse(files, (), roots)
    return [(e["where"], e["status"]) for e in ev if e["name"] == name]


# Calls named load/load_library that are not torch's: none is a site.
NOT_TORCH = {
    # haotian-liu/LLaVA llava/serve/gradio_web_server.py:7 and :436 (inside build_demo)
    "llava/serve/gradio_web_server.py":
        "import gradio as gr\n"
        "def build_demo(embed_mode, cur_dir=None, concurrency_count=10):\n"
        "    with gr.Blocks(title='LLaVA', theme=gr.themes.Default(), css=block_css) as demo:\n"
        "        demo.load(\n"
        "            load_demo,\n"
        "            [url_params],\n"
        "            [state, model_selector],\n"
        "            js=get_window_url_params\n"
        "        )\n",
    # jakesnell/prototypical-networks scripts/train/few_shot/train.py:16 and :40
    "scripts/train/few_shot/train.py":
        "import protonets.utils.data as data_utils\n"
        "def main(opt):\n"
        "    if opt['data.trainval']:\n"
        "        data = data_utils.load(opt, ['trainval'])\n"
        "    else:\n"
        "        data = data_utils.load(opt, ['train', 'val'])\n",
    # fxia22/pointnet.pytorch utils/show3d_balls.py:22
    "utils/show3d_balls.py":
        "import numpy as np\n"
        "dll = np.ctypeslib.load_library('render_balls_so', '.')\n",
    # BlinkDL/RWKV-LM RWKV-v3/run.py:78 (the model's own `def load`)
    "RWKV-v3/run.py": "model = RWKV_RNN(MODEL_NAME, os.environ['RWKV_RUN_DEVICE'])\n"
                      "model.load(init_state)\n",
    # NX-AI/xlstm xlstm/blocks/slstm/cell.py:12 and :517: the repository's wrapper, not torch's
    "xlstm/blocks/slstm/cell.py": "from .src.cuda_init import load\n"
                                  "class sLSTMCellFuncGenerator:\n"
                                  "    def get(cls, config):\n"
                                  "        cls.mod[cache_key] = load(\n"
                                  "            name=config.defines, sources=[])\n",
}

# The forms that do resolve to torch.utils.cpp_extension / torch.ops: each is a site.
TORCH = {
    # BlinkDL/RWKV-LM RWKV-v3/src/model.py:5 and :27
    "RWKV-v3/src/model.py": (
        "from torch.utils.cpp_extension import load\n"
        "timex_cuda = load(name=\"timex\", sources=[\"cuda/timex_op.cpp\", \"cuda/timex_cuda.cu\"],\n"
        "                  verbose=True)\n", 2, "cpp_extension.load"),
    # NVlabs/stylegan3 torch_utils/custom_ops.py:18 and :139
    "torch_utils/custom_ops.py": (
        "import torch.utils.cpp_extension\n"
        "def get_plugin(module_name, sources, **build_kwargs):\n"
        "    torch.utils.cpp_extension.load(name=module_name, verbose=verbose_build, "
        "sources=sources, **build_kwargs)\n", 3, "cpp_extension.load"),
    # DeepGraphLearning/ULTRA ultra/rspmm/rspmm.py:6 and :202 (sources a variable: missed before)
    "ultra/rspmm/rspmm.py": (
        "from torch.utils import cpp_extension\n"
        "def load_extension(name, sources, extra_cflags=None, extra_cuda_cflags=None, **kwargs):\n"
        "    return cpp_extension.load(name, sources, extra_cflags, extra_cuda_cflags, **kwargs)\n",
        3, "cpp_extension.load"),
    # NX-AI/xlstm xlstm/blocks/slstm/src/cuda_init.py:12 and :115 (an alias)
    "xlstm/blocks/slstm/src/cuda_init.py": (
        "from torch.utils.cpp_extension import load as _load\n"
        "def load(*, name, sources, extra_cflags=(), extra_cuda_cflags=(), **kwargs):\n"
        "    mod = _load(name + suffix, sources, **myargs)\n", 3, "cpp_extension.load"),
    # the module-alias form the rule names (no corpus project writes it this way)
    "ops/jit.py": ("import torch.utils.cpp_extension as ext\n"
                   "mod = ext.load_inline('op', cpp_sources=[SRC])\n", 2, "cpp_extension.load"),
    # rusty1s/pyg_autoscale torch_geometric_autoscale/__init__.py:4 and :9
    "torch_geometric_autoscale/__init__.py": (
        "import torch\n"
        "for library in ['_relabel', '_async']:\n"
        "    torch.ops.load_library(importlib.machinery.PathFinder().find_spec(\n"
        "        library, [osp.dirname(__file__)]).origin)\n", 3, "torch.ops.load_library"),
}


def test_a_load_call_is_a_site_only_when_it_resolves_to_torch():
    files = {**NOT_TORCH, **{path: text for path, (text, _, _) in TORCH.items()}}
    ev = gpu_deps.analyse(files, (), [])
    got = {(e["name"], e["where"]) for e in ev}
    want = {(name, f"{path}:{line}") for path, (_, line, name) in TORCH.items()}
    assert got == want
    for path in NOT_TORCH:
        assert not any(where.startswith(path + ":") for _, where in got), path


def test_compile_call_resolution_reads_the_module_imports():
    bound = {"load": "torch.utils.cpp_extension.load", "ext": "torch.utils.cpp_extension",
             "cpp_extension": "torch.utils.cpp_extension", "data_utils": "protonets.utils.data",
             "wrapper": ".src.cuda_init.load", "np": "numpy"}
    assert patterns.compile_call_site("load", bound) == "cpp_extension.load"
    assert patterns.compile_call_site("ext.load_inline", bound) == "cpp_extension.load"
    assert patterns.compile_call_site("cpp_extension.load", bound) == "cpp_extension.load"
    assert patterns.compile_call_site("torch.ops.load_library", {}) == "torch.ops.load_library"
    for callee in ("data_utils.load", "demo.load", "wrapper", "np.ctypeslib.load_library",
                   "cpp_extension.load_inline_x", "torch.load"):
        assert patterns.compile_call_site(callee, bound) is None, callee


# rusty1s/pyg_autoscale setup.py:12-16, :20 and :36-37 (abridged: the switch and the two types)
PYG_SETUP = (
    "from torch.utils.cpp_extension import (CUDA_HOME, BuildExtension, CppExtension,\n"
    "                                       CUDAExtension)\n"
    "WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None\n"
    "if os.getenv('FORCE_ONLY_CPU', '0') == '1':\n"
    "    WITH_CUDA = False\n"
    "def get_extensions():\n"
    "    Extension = CppExtension\n"
    "    if WITH_CUDA:\n"
    "        Extension = CUDAExtension\n"
    "    extension = Extension('torch_geometric_autoscale._' + name, sources)\n"
)


def test_a_library_its_setup_also_builds_for_cpu_is_conditional():
    files = {
        "setup.py": PYG_SETUP,
        "large_benchmark/main.py": "from torch_geometric_autoscale import (get_data, metis)\n",
        "torch_geometric_autoscale/__init__.py": TORCH["torch_geometric_autoscale/__init__.py"][0],
    }
    assert patterns.builds_without_cuda(PYG_SETUP)
    sites = _sites(files, ["large_benchmark/main.py"], "torch.ops.load_library")
    assert sites == [("torch_geometric_autoscale/__init__.py:3", "conditional")]
    # yanx27/JS3C-Net: lib/setup.py falls back to CppExtension for SCN, but spconv's library is
    # built by the nearer lib/spconv/setup.py (CMake, CUDA only): still hard
    js3c = {
        "train.py": "from lib.spconv import spconv\n",
        "lib/setup.py": "from torch.utils.cpp_extension import BuildExtension, CppExtension, "
                        "CUDAExtension\n"
                        "ext = [CUDAExtension('sparseconvnet.SCN', s) "
                        "if torch.cuda.is_available() else CppExtension('sparseconvnet.SCN', s)]\n",
        "lib/spconv/setup.py": "from setuptools.command.build_ext import build_ext\n"
                               "class CMakeBuild(build_ext):\n    pass\n",
        "lib/spconv/spconv/__init__.py": "import torch\ntorch.ops.load_library(_LIB_PATH)\n",
    }
    assert not patterns.builds_without_cuda(js3c["lib/spconv/setup.py"])
    assert _sites(js3c, ["train.py"], "torch.ops.load_library") == [
        ("lib/spconv/spconv/__init__.py:2", "hard")]
    # importing CppExtension without using it is no CPU build (Deformable-DETR style)
    assert not patterns.builds_without_cuda(
        "from torch.utils.cpp_extension import CppExtension, CUDAExtension\n"
        "extension = CUDAExtension\n")


def test_llava_flash_attention_keyword_is_a_choice():
    # haotian-liu/LLaVA llava/train/train_mem.py:1-4
    files = {"llava/train/train_mem.py": "from llava.train.train import train\n\n"
                                         "if __name__ == \"__main__\":\n"
                                         "    train(attn_implementation=\"flash_attention_2\")\n",
             "llava/train/train.py": "def train(attn_implementation=None):\n    pass\n"}
    ev = gpu_deps.analyse(files, (), ["llava/train/train_mem.py"])
    assert [(e["where"], e["status"]) for e in ev] == [("llava/train/train_mem.py:4",
                                                        "conditional")]


def _record(rid: str) -> dict:
    rec = load_record(PROJECTS_DIR / f"{rid}.yaml")
    assert rec.data is not None, rec.error
    return rec.data


def _evidence(scan: dict, name: str) -> list[dict]:
    return [e for e in scan["cuda_only"]["evidence"] if e["name"] == name]


def test_cutblur_records_the_readme_command():
    # clovaai/cutblur README.md:70-76 (train at X2; EDSR chosen of [EDSR|RCAN|CARN]), its
    # <directory_of_dataset> placeholder set to data/DIV2K (issue 43: no placeholder in a command)
    readme = ("python main.py --use_moa --model EDSR --dataset DIV2K_SR "
              "--div2k_range 1-800/801-810 --scale 2 --dataset_root data/DIV2K")
    command = _record("clovaai__cutblur")["curated"]["train_command"]
    assert shlex.split(command) == shlex.split(readme)
    assert "--augs" not in command  # without --use_moa the --prob/--alpha defaults have one item


@pytest.mark.parametrize("rid", ["rusty1s__pyg_autoscale", "HazyResearch__hyena-dna",
                                 "haotian-liu__LLaVA", "clovaai__cutblur",
                                 "jakesnell__prototypical-networks"])
def test_audited_records_derive_consistently(rid):
    scan = _record(rid)["scan"]
    hard = gpu_deps.hard_names(scan["cuda_only"]["evidence"])
    assert scan["cuda_only"]["hard"] == hard == scan["runnability"]["hard_cuda_deps"]
    want = difficulty.derive(scan)
    assert {k: scan[k] for k in want} == want


def test_audited_records_say_what_the_audit_found():
    pyg = _record("rusty1s__pyg_autoscale")["scan"]
    assert [e["status"] for e in _evidence(pyg, "torch.ops.load_library")] == ["conditional"]
    assert pyg["tier"] < 3 and pyg["runnability"]["cpu_task"] == "possible"
    hyena = _record("HazyResearch__hyena-dna")["scan"]
    assert hyena["cuda_only"]["hard"] == [] and hyena["tier"] < 3
    assert "hard" not in {e["status"] for e in _evidence(hyena, "flash_attn")}
    llava = _record("haotian-liu__LLaVA")["scan"]
    assert llava["cuda_only"]["hard"] == ["deepspeed"] and llava["tier"] == 3
    assert "hard" not in {e["status"] for e in _evidence(llava, "flash_attn")}
    assert llava["runnability"]["model"]["size"] == "large"
    # the audit's changes are curated corrections, marked on the rows they change (so a rescan
    # keeps them: tests/corpus/test_curated_corrections.py)
    assert [(e["where"], e["status"]) for e in _evidence(llava, "deepspeed")
            if e.get("corrected")] == [("llava/train/llava_trainer.py:19", "hard"),
                                       ("llava/train/train.py:116", "hard"),
                                       ("scripts/v1_5/pretrain.sh:3", "hard")]
    assert [e["status"] for e in _evidence(hyena, "flash_attn") if e.get("corrected")] == [
        "conditional"] * 3
    assert not _evidence(llava, "cpp_extension.load")
    assert not _evidence(_record("jakesnell__prototypical-networks")["scan"], "cpp_extension.load")


def test_no_record_cites_a_foreign_load_call():
    """Every cpp_extension.load / load_library line in the corpus is a torch call or an alias."""
    foreign = re.compile(r"\b(?!cpp_extension\b|ops\b)\w+\.load(?:_inline|_library)?\(")
    bad = [(r.path.name, e["code"]) for r in load_records() if r.data
           for e in r.data["scan"]["cuda_only"]["evidence"]
           if e["name"] in ("cpp_extension.load", "torch.ops.load_library")
           and foreign.search(e["code"])]
    assert bad == []
