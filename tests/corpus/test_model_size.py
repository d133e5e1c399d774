"""corpus/model_size.py: the model's size read from the repository, on real pinned lines.

Snippets are single lines of the projects at their pinned commits (file:line in the comments);
the snapshot tests scan /work/shared/sources archives ($GPU2TPU_SOURCES) and skip without them.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from gpu2tpu.corpus import model_size, runnability
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record
from gpu2tpu.corpus.scanner import scan_path
from gpu2tpu.tasks.sources import sources_dir

SHARED_SOURCES = sources_dir() or (Path(__file__).resolve().parents[3] / "shared" / "sources")


@pytest.mark.parametrize(("name", "params", "size"), [
    ("codet5_base", 220e6, "medium"),  # salesforce/CodeT5 train command --model_tag
    ("Salesforce/codet5-small", 60e6, "medium"),
    ("lmsys/vicuna-13b-v1.5", 13e9, "large"),
    ("meta-llama/Llama-2-7b-hf", 7e9, "large"),
    ("EleutherAI/pythia-410m-deduped", 410e6, "medium"),
    ("facebook/opt-1.3b", 1.3e9, "large"),
    ("configs/llama_60m.json", 60e6, "medium"),  # jiaweizzhao/GaLore train command
    ("resnet50", 25.6e6, "small"),
    ("resnet-110", 1.7e6, "small"),
    ("ViT-L/14", 304e6, "medium"),
    ("vit_base_patch16_224", 86e6, "medium"),
    ("deit_tiny_patch16_224", 5.7e6, "small"),
    ("swin_tiny_patch4_window7_224", 28e6, "small"),
    ("gpt2-medium", 355e6, "medium"),
    ("gpt2", 124e6, "medium"),
    ("roberta-large", 355e6, "medium"),
    ("vicuna", 7e9, "large"),  # a family with no model under 1B
])
def test_the_table_sizes_known_names(name: str, params: float, size: str) -> None:
    got = model_size.name_params(name)
    assert got == pytest.approx(params)
    assert got is not None and model_size.size_of(got) == size


@pytest.mark.parametrize("text", [
    "pile/hyena-150b-tokens",  # HazyResearch/safari: 150B tokens, not parameters
    "vits",  # jaywalnut310/vits (a TTS model, not ViT-S)
    "resnet200", "GPT2Tokenizer", "optimizer-1m", "bert-xsmall",
])
def test_names_the_table_does_not_know(text: str) -> None:
    assert model_size.name_params(text) is None


def test_size_thresholds() -> None:
    assert [model_size.size_of(p) for p in (49.9e6, 50e6, 999e6, 1e9)] == [
        "small", "medium", "medium", "large"]


def test_stated_counts_in_a_readme() -> None:
    lines = {
        # quark0/darts README.md:28
        "* Expected result: 2.63% test error rate with 3.3M model params.": 3.3e6,
        # CompVis/taming-transformers README.md:28 (shortened after the link)
        "- Added a pretrained, [1.4B transformer model](https://k00.fr/s511rwcv) trained": 1.4e9,
        # microsoft/Swin-Transformer README.md:63 (excerpt)
        "works out the 3-billion-parameter Swin V2 model": 3e9,
    }
    for line, params in lines.items():
        found = model_size.findings({"README.md": line}, None, [], [])
        assert [(f.params, f.where) for f in found] == [(pytest.approx(params), "README.md:1")]
    # microsoft/Swin-Transformer README.md:112 (a table header) and CodeT5/README.md:28
    for line in ("| name | pretrain | resolution |acc@1 | acc@5 | #params | FLOPs | FPS| 22K model |",
                 ". CodeT5 is a new pre-trained encoder-decoder model ... pre-trained on **8.35M**"
                 " functions"):
        assert model_size.findings({"README.md": line}, None, [], []) == []


def test_the_parameter_column_of_a_readme_table_and_its_first_row() -> None:
    # FoundationVision/VAR README.md:89-93 (links cut): the first row is the model trained
    table = ("|   model    | reso. |   FID    | rel. cost | #params | HF weights |\n"
             "|:----------:|:-----:|:--------:|:---------:|:-------:|:-----------|\n"
             "|  VAR-d16   |  256  |   3.55   |    0.4    |  310M   | [var_d16.pth] |\n"
             "|  VAR-d20   |  256  |   2.95   |    0.5    |  600M   | [var_d20.pth] |\n"
             "|  VAR-d24   |  256  |   2.33   |    0.6    |  1.0B   | [var_d24.pth] |\n")
    found = model_size.findings({"README.md": table}, None, [], [])
    assert [(f.params, f.where) for f in found] == [
        (310e6, "README.md:3"), (600e6, "README.md:4"), (1e9, "README.md:5")]
    got = model_size.decide(found)
    assert got is not None and (got["size"], got["where"]) == ("medium", "README.md:3")
    # kakaobrain/sparse-detr README.md:156 and :162 (cut after the FLOPs)
    detr = ("| Method          | Epochs | ρ   | Top-k & BBR | AP   | #Params(M) | GFLOPs |\n"
            "|:---------------:|:------:|:---:|:-----------:|:----:|:----------:|:------:|\n"
            "| Sparse-DETR     | 50     | 10% | o           | 48.2 | 41.4M      | 113.4G |\n")
    assert [f.params for f in model_size.findings({"README.md": detr}, None, [], [])] == [
        pytest.approx(41.4e6)]
    # constructed: a bare number takes the header's unit; no unit anywhere is no count
    for cell, want in (("41.4", [pytest.approx(41.4e6)]), ("48.2", [])):
        rows = detr.replace("41.4M     ", cell.ljust(10))
        rows = rows if want else rows.replace("#Params(M)", "#Params   ")
        assert [f.params for f in model_size.findings({"README.md": rows}, None, [], [])] == want
    # DeepGraphLearning/ULTRA README.md:98 (excerpt)
    ultra = "(6-layer GNNs per relation and entity graphs, 64d, 168k total parameters)"
    assert [f.params for f in model_size.findings({"README.md": ultra}, None, [], [])] == [168e3]


def test_architecture_from_configs_scripts_and_the_command() -> None:
    # BlinkDL/RWKV-LM RWKV-v7/train_temp/demo-training-run.sh:13-14
    sh = model_size.findings({"run/demo-training-run.sh": 'N_LAYER="12"\nN_EMBD="768"\n'},
                             "cd run && sh ./demo-training-run.sh", [], [])
    assert [(f.tier, f.params, f.where) for f in sh] == [(2, 12 * 12 * 768 ** 2,
                                                          "run/demo-training-run.sh:2")]
    # HazyResearch/hyena-dna: the curated command overrides the config's d_model: 32
    command = ("python -m train wandb=null experiment=hg38/hg38_hyena model.d_model=128 "
               "model.n_layer=2 dataset.batch_size=256")
    config = "model:\n  _name_: lm\n  d_model: 32\n  n_layer: 2\n"
    got = model_size.read_model_size({"configs/experiment/hg38/hg38_hyena.yaml": config},
                                     command, [], ["configs/experiment/hg38/hg38_hyena.yaml"])
    assert got is not None and got["where"] == "train_command" and got["size"] == "small"
    assert "d_model 128 x n_layer 2" in got["evidence"]


def test_scripts_the_command_names_by_a_path_tail_or_from_its_cd_folder() -> None:
    # yuqinie98/PatchTST PatchTST_supervised/scripts/PatchTST/weather.sh:31-33; the command runs
    # it as ./scripts/PatchTST/weather.sh; scripts/Linear/weather.sh is another script
    texts = {"PatchTST_supervised/scripts/PatchTST/weather.sh":
             "      --e_layers 3 \\\n      --n_heads 16 \\\n      --d_model 128 \\\n",
             "PatchTST_supervised/scripts/Linear/weather.sh": "  --model DLinear \\\n"}
    got = model_size.read_model_size(texts, "sh ./scripts/PatchTST/weather.sh", [], [])
    assert got is not None and got["where"] == "PatchTST_supervised/scripts/PatchTST/weather.sh:3"
    assert got["evidence"] == ("architecture on the training path: d_model 128 x e_layers 3 "
                               "(line 1) (~590K parameters)")
    # thuml/Transolver PDE-Solving-StandardBenchmark/scripts/Transolver_Elas.sh:4 and :6
    elas = "python exp_elas.py \\\n--gpu 6 \\\n--model Transolver_Irregular_Mesh \\\n" \
           "--n-hidden 128 \\\n--n-heads 8 \\\n--n-layers 8 \\\n"
    got = model_size.read_model_size(
        {"PDE-Solving-StandardBenchmark/scripts/Transolver_Elas.sh": elas},
        "cd PDE-Solving-StandardBenchmark && bash scripts/Transolver_Elas.sh", [], [])
    assert got is not None and got["size"] == "small" and got["evidence"].startswith(
        "architecture on the training path: n-hidden 128 x n-layers 8 (line 6)")
    # willisma/SiT: the curated command names the model
    got = model_size.read_model_size({}, "torchrun --nnodes=1 --nproc_per_node=N train.py "
                                     "--model SiT-XL/2 --data-path /path/to/imagenet/train", [], [])
    assert got is not None and (got["size"], got["where"]) == ("medium", "train_command")


def test_python_reads_defaults_not_tokenizers_docstrings_or_choices() -> None:
    text = "\n".join([
        # salesforce/CodeT5 CodeT5/README.md:116 as code: a tokenizer's checkpoint
        "tokenizer = RobertaTokenizer.from_pretrained('Salesforce/codet5-base')",
        # microsoft/DeBERTa DeBERTa/apps/run.py:428-429: the vocabulary's name
        "  parser.add_argument('--vocab_type',",
        "            default='gpt2',",
        # salesforce/CodeT5 CodeT5/configs.py:16 (choices)
        "    parser.add_argument(\"--model_type\", default=\"codet5\", type=str, "
        "choices=['roberta', 'bart', 'codet5'])",
        '    """Example:', "    model = GPT2Model.from_pretrained('gpt2-large')", '    """',
        # HobbitLong/SupContrast main_supcon.py:54
        "    parser.add_argument('--model', type=str, default='resnet50')",
        # xingyizhou/CenterNet src/lib/models/networks/msra_resnet.py:21 (a URL table entry)
        "  'resnet18': 'https://download.pytorch.org/models/resnet18-5c106cde.pth',",
        # ChenRocks/UNITER prepro.py:175 (the tokenizer, "toker")
        "    parser.add_argument('--toker', default='bert-base-cased',",
    ])
    found = model_size.findings({"main.py": text}, None, ["main.py"], [])
    assert [(f.what, f.where, f.tier) for f in found] == [("names 'resnet50'", "main.py:8", 1)]


def test_the_training_path_beats_a_readme_count_which_beats_other_files() -> None:
    texts = {
        # NX-AI/xlstm README.md:25 announces its 7B model; experiments/parity_xlstm11.yaml:17-18
        "README.md": ":rotating_light: We trained a 7B parameter xLSTM Language Model on 2.3T "
                     "tokens! :rotating_light:",
        "experiments/parity_xlstm11.yaml": "model:\n  num_blocks: 2\n  embedding_dim: 64\n",
        "other/eval.py": "model = timm.create_model(model_name='vit_large_patch16_224')",
    }
    command = "PYTHONPATH=. python experiments/main.py --config experiments/parity_xlstm11.yaml"
    got = model_size.read_model_size(texts, command, ["experiments/main.py"], [])
    assert got is not None and got["size"] == "small"
    assert got["where"] == "experiments/parity_xlstm11.yaml:3"
    assert got["evidence"].startswith("architecture on the training path: embedding_dim 64 x "
                                      "num_blocks 2 (line 2)")
    del texts["experiments/parity_xlstm11.yaml"]
    got = model_size.read_model_size(texts, command, ["experiments/main.py"], [])
    assert got is not None and (got["size"], got["where"]) == ("large", "README.md:1")


def test_the_majority_of_the_strongest_tier_decides() -> None:
    # akamaster/pytorch_resnet_cifar10 run.sh:3: six CIFAR ResNets, all small
    run = "for model in resnet20 resnet32 resnet44 resnet56 resnet110 resnet1202"
    got = model_size.read_model_size({"run.sh": run}, "./run.sh", [], [])
    assert got is not None and got["size"] == "small" and "of 6 small" in got["evidence"]
    # vwxyzjn/summarize_from_feedback_details hello_world.sh:6 beats a 7B name elsewhere
    got = model_size.read_model_size(
        {"hello_world.sh": "MODEL=EleutherAI/pythia-410m-deduped",
         "tools/chat.py": "model_name = 'meta-llama/Llama-2-7b-hf'"}, "bash hello_world.sh",
        [], [])
    assert got is not None and got["size"] == "medium" and got["where"] == "hello_world.sh:1"


def test_runnability_falls_back_to_data_scale_and_says_so() -> None:
    data = runnability.data_entries(["Cora"])
    assert runnability.model_size({"task": "node classification"}, data) == {
        "size": "small", "where": "", "code": "",
        "evidence": "fallback, no model size found in the repository: trains only on small, "
                    "synthetic or simulated data"}
    # the curated-text fallback agrees with the table: ViT-L (304M) is no large model
    assert runnability.model_size({"task": "fine-tune ViT-L/14"}, [])["size"] == "medium"
    assert runnability.model_size({"task": "finetune LLaMA-7B"}, [])["size"] == "large"
    repo = {"size": "large", "evidence": "the training command: names 'llama-7b'",
            "where": "train_command", "code": "python qlora.py --model_name_or_path llama-7b"}
    block = runnability.assess({"datasets": ["Alpaca"]}, {}, [], [], repo)
    assert block["model"] == repo and block["cpu_task"] == "unlikely"
    assert block["reasons"] == ["large model (the training command: names 'llama-7b')"]


def _snapshot(rid: str, tmp_path: Path) -> Path:
    archive = SHARED_SOURCES / f"{rid}.tar.gz"
    if not archive.is_file():
        pytest.skip(f"no snapshot {archive} (set $GPU2TPU_SOURCES)")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / rid, filter="data")
    return tmp_path / rid


def _scan_model(rid: str, tmp_path: Path) -> dict:
    rec = load_record(PROJECTS_DIR / f"{rid}.yaml").data
    assert rec is not None
    scan = scan_path(_snapshot(rid, tmp_path), repo=rec["repo"],
                     train_command=rec["curated"]["train_command"], curated=rec["curated"])
    return scan["runnability"]["model"]


def test_codet5_is_sized_by_its_t5_checkpoint_not_its_datasets(tmp_path: Path) -> None:
    model = _scan_model("salesforce__CodeT5", tmp_path)  # was "small" from CodeSearchNet & co
    # the command is run_gen.py as CodeT5/sh/exp_with_args.sh launches it (issue 43's second read)
    assert (model["size"], model["where"]) == ("medium", "train_command")
    assert model["evidence"].startswith("the training command: names 'codet5-base' (~220M "
                                        "parameters)")
    assert model["code"].startswith("cd CodeT5 && python run_gen.py --do_train")


def test_swin_is_sized_by_the_config_its_command_names(tmp_path: Path) -> None:
    model = _scan_model("microsoft__Swin-Transformer", tmp_path)
    assert (model["size"], model["where"]) == ("small", "train_command")
    assert "'swin-tiny' (~28M parameters)" in model["evidence"]


def test_pygcn_stays_small_by_the_fallback(tmp_path: Path) -> None:
    model = _scan_model("tkipf__pygcn", tmp_path)
    assert model["size"] == "small" and (model["where"], model["code"]) == ("", "")
    assert model["evidence"].startswith("fallback, no model size found in the repository")
