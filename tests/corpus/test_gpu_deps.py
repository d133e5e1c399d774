"""Hard vs guarded CUDA-only dependencies: statuses, evidence lines and the tier they give."""

from __future__ import annotations

from corpus_helpers import MIT, commit_files

from gpu2tpu.corpus import gpu_deps, train_roots
from gpu2tpu.corpus.scanner import scan_path


def _status(evidence, name):
    return {e["status"] for e in evidence if e["name"] == name}


def test_statuses_of_each_kind_of_site():
    files = {
        "train.py": "import torch\nfrom model import Net\ntry:\n    import apex\n"
                    "except ImportError:\n    apex = None\n"
                    "def main():\n    import deepspeed\n",
        "model.py": "import flash_attn\nif USE_X:\n    import xformers\n",
        "eval.py": "import bitsandbytes\n",
        "setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"
                    "ext = CUDAExtension('fused_op', ['k.cu'])\n",
        "ops.py": "import fused_op\n",
    }
    ev = gpu_deps.analyse(files, declared={"apex", "mamba_ssm"}, roots=["train.py"])
    assert _status(ev, "flash_attn") == {"hard"}
    hard = next(e for e in ev if e["name"] == "flash_attn")
    assert hard["where"] == "model.py:1" and hard["code"] == "import flash_attn"
    assert hard["via"] == "train.py -> model.py"
    assert _status(ev, "apex") == {"guarded"}
    assert _status(ev, "deepspeed") == {"conditional"}
    assert _status(ev, "xformers") == {"conditional"}
    assert _status(ev, "bitsandbytes") == {"off_path"}
    assert _status(ev, "kernel:fused_op") == {"off_path"}
    assert _status(ev, "mamba_ssm") == {"declared"}
    assert gpu_deps.hard_names(ev) == ["flash_attn"]


def test_a_handler_that_reraises_is_no_guard_and_fallbacks_are_followed():
    files = {
        "train.py": "import net\n",
        "net.py": "try:\n    from apex import amp\nexcept ImportError:\n"
                  "    raise ImportError('install apex')\n"
                  "try:\n    import _ray\nexcept ImportError:\n    from backend import _ray\n",
        "backend.py": "from torch.utils.cpp_extension import load\n"
                      "_ray = load(name='ray', sources=['ray.cu'])\n",
    }
    ev = gpu_deps.analyse(files, declared=(), roots=["train.py"])
    assert _status(ev, "apex") == {"hard"}
    assert _status(ev, "cpp_extension.load") == {"hard"}
    assert next(e for e in ev if e["name"] == "cpp_extension.load")["where"] == "backend.py:2"


def test_packages_loaded_by_name_and_library_loads_count():
    files = {
        "train.py": "from registry import build\n",
        "registry.py": "MODELS = {'lm': 'pkg.models.lm.LM'}\n",
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": "",
        "pkg/models/lm.py": "from flash_attn.modules.mha import MHA\n",
        "cfgmod/__init__.py": "import torch\ntorch.ops.load_library('lib.so')\n",
        "hf.py": "model = load(attn_implementation='flash_attention_2')\n",
    }
    ev = gpu_deps.analyse(files, (), ["train.py"], config_modules=["cfgmod"])
    assert _status(ev, "flash_attn") == {"hard", "off_path"}  # lm.py via the registry string
    assert _status(ev, "torch.ops.load_library") == {"hard"}
    ev = gpu_deps.analyse({"train.py": "import hf\n", "hf.py": files["hf.py"]}, (), ["train.py"])
    # the keyword picks an attention implementation ("sdpa"/"eager" run anywhere): a choice
    assert gpu_deps.hard_names(ev) == [] and _status(ev, "flash_attn") == {"conditional"}


def test_one_word_imports_resolve_only_near_the_importer():
    files = {
        "v7/train.py": "from src.model import M\n",
        "v7/src/model.py": "x = 1\n",
        "v4/src/model.py": "import flash_attn\n",
    }
    ev = gpu_deps.analyse(files, (), ["v7/train.py"])
    assert gpu_deps.hard_names(ev) == [] and _status(ev, "flash_attn") == {"off_path"}


def test_training_command_forms_resolve_to_scripts_and_configs():
    py = {"src/main.py", "pkg/cli/main.py", "scripts/train.py", "tools/x.py"}
    texts = {"run.sh": "cd scripts\npython $ROOT/train.py --cfg configs/a.yaml\n",
             "configs/a.yaml": "_parent_: configs/base.yaml\n",
             "configs/base.yaml": "model:\n  type: projects.nerf.model\n",
             "configs/custom/template.yaml": "x: 1\n"}
    by_suffix = {"cli.main": ["pkg/cli/main.py"], "pkg.cli.main": ["pkg/cli/main.py"]}
    r = train_roots.training_roots("cd src && python main.py --x 1", py, texts, by_suffix)
    assert r.scripts == ["src/main.py"]
    r = train_roots.training_roots("python -m cli.main", py, texts, by_suffix)
    assert r.scripts == ["pkg/cli/main.py"]
    r = train_roots.training_roots("bash run.sh", py, texts, by_suffix)
    assert r.scripts == ["scripts/train.py"]
    assert r.config_files == ["configs/a.yaml", "configs/base.yaml"]
    assert "projects.nerf.model" in r.config_modules
    r = train_roots.training_roots("python tools/x.py --config=configs/custom/mine.yaml", py,
                                   texts, by_suffix)
    assert r.config_files == ["configs/custom/template.yaml"]  # the missing file's templates


def test_optional_apex_is_tier_2_and_a_hard_import_is_tier_3(tmp_path):
    optional = {"LICENSE": MIT, "train.py": "import torch\ntry:\n    from apex import amp\n"
                "except ImportError:\n    amp = None\nx = torch.zeros(1).cuda()\n"
                "if amp:\n    model, opt = amp.initialize(model, opt)\n",
                "requirements.txt": "apex\n"}
    commit_files(tmp_path / "opt", optional)
    scan = scan_path(tmp_path / "opt", train_command="python train.py")
    assert scan["cuda_only_deps"] == ["apex"] and scan["tier"] == 2
    assert scan["cuda_only"]["hard"] == []
    assert scan["cuda_only"]["training_roots"] == ["train.py"]
    assert scan["cuda_only"]["roots_from"] == "train_command"
    assert {e["status"] for e in scan["cuda_only"]["evidence"]} == {"guarded"}
    hard = dict(optional, **{"train.py": "import torch\nfrom apex import amp\n"})
    commit_files(tmp_path / "hard", hard)
    scan = scan_path(tmp_path / "hard", train_command="python train.py")
    assert scan["tier"] == 3 and scan["cuda_only"]["hard"] == ["apex"]
    assert scan["cuda_only"]["evidence"][0]["where"] == "train.py:2"


def test_a_switch_whose_every_branch_imports_is_unconditional():
    files = {"train.py": "if a:\n    from net_a import Net\nelif b:\n    from net_b import Net\n"
                         "else:\n    from net_c import Net\n"
                         "if amp:\n    import apex\n",
             "net_a.py": "import renderer\n", "net_b.py": "import renderer\n",
             "net_c.py": "import renderer\n", "renderer.py": "import tinycudann\n"}
    ev = gpu_deps.analyse(files, (), ["train.py"])
    assert _status(ev, "tinycudann") == {"hard"}
    assert _status(ev, "apex") == {"conditional"}  # an `if` without else stays conditional


def test_a_config_value_naming_a_module_file_reaches_it(tmp_path):
    commit_files(tmp_path / "r", {
        "LICENSE": MIT,
        "main.py": "import importlib\nm = importlib.import_module('network.' + cfg['arch'])\n",
        "network/__init__.py": "", "network/arch_x.py": "import spconv.pytorch as spconv\n",
        "config/x.yaml": "model_params:\n  arch: arch_x\n"})
    scan = scan_path(tmp_path / "r", train_command="python main.py --config config/x.yaml")
    assert scan["cuda_only"]["config_files"] == ["config/x.yaml"]
    assert scan["cuda_only"]["hard"] == ["spconv"] and scan["tier"] == 3
