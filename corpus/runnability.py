"""Could this project become a runnable task on a CPU-only machine? An estimate with evidence.

Four questions, each answered from the record (curated facts + scan), never by running code:
  data     each dataset the project trains on: synthetic, small, medium, large or simulator, and
           whether stand-in data in its format is feasible (common formats: images, text, tables,
           graphs, time series; hard: video, 3D scans, driving logs, proprietary simulators)
  model    small / medium / large, from the repository's own evidence (corpus/model_size.py:
           stated counts, checkpoint names, config sizes); failing that, from the named model
           family and the data scale (a fallback that says so)
  cuda     hard CUDA-only dependencies (the tier-3 evidence)
  heavy    heavyweight dependencies a sandboxed CPU machine struggles to install
The verdict: `likely` (nothing in the way), `possible` (work needed: stand-in data in a hard
format, a medium model, heavyweight installs), `unlikely` (hard CUDA-only code or a large model).
"""

from __future__ import annotations

import re
from typing import Any

# (kind, stand-in feasible, pattern) for dataset names; first match wins.
DATA_RULES: tuple[tuple[str, bool, str], ...] = (
    ("synthetic", True, r"synthetic|adding problem|copy memory|parity|\bn-body|3-body|2d shapes"
     r"|3d cubes|\btsp\b|graphtheoryprop|cycles|pattern|cluster"),
    ("simulator", False, r"starcraft|google research football|hanabi|carla"),
    ("simulator", True, r"classic control|multi-agent particle"),
    ("simulator", False, r"atari|mujoco|pybullet|deepmind control|procgen|meta-world|d4rl"),
    ("large", False, r"kinetics|something-something|ucf101|hmdb|ava\b|youtubevis|nuscenes"
     r"|semantickitti|semanticposs|scannet|sun rgb-d|kitti|human3\.6m|3dpw|mpi-inf|aist"
     r"|tanks and temples|\bdtu\b"),
    ("large", True, r"imagenet(?!.*64)|coco|laion|datacomp|cc3m|cc12m|conceptual captions|sbu"
     r"|lvd-142m|ffhq|lsun|celeba-hq|openimages|objectnet|visual genome|vqa|gqa|nlvr2|vcr"
     r"|refcoco|flickr30k|textvqa|mmbench|cityscapes|ade20k|mapillary|pascal voc|the pile|c4"
     r"|redpajama|slimpajama|starcoderdata|wikipedia|bookcorpus|one billion word|wikitext-103"
     r"|criteo|era5|hg38|librispeech|common voice|ted-lium|musdb|million song|magnatagatune"
     r"|ogbn-products|ogbl-wikikg2|ogbg-ppa|pcqm4m|freebase|fb400k|flan|ultrachat|llava"
     r"|iNat2017|df2k|outdoorscene|metfaces|afhq|celeba|stanford online|in-shop|cub-200"
     r"|stanford (cars|dogs)|nabirds|vehicleid|flyingchairs|flyingthings|sintel|hd1k|llff"
     r"|nerf synthetic|shapenet|modelnet|airfrans|carvana|brecahad|pokemon|imagenet 64"),
    ("small", True, r"mnist|cifar|svhn|stl-10|omniglot|cora|citeseer|pubmed|mutag|proteins"
     r"|nci1|ptc|imdb-|reddit-|collab|zinc|qm9|aqsol|tu datasets|moleculenet|ogbg-mol|ppi"
     r"|amazon-|coauthor|wikics|ogbn-arxiv|fb15k|wn18rr|nell|codex|ilpc|penn treebank"
     r"|wikitext-2|text8|enwik8|etth?|ettm|weather|ili\b|electricity|traffic|ecl\b|exchange"
     r"|jsb|nottingham|power|gas|hepmass|miniboone|bsds300|facades|maps|edges2|night2day"
     r"|horse2zebra|speech commands|an4|office|digits|visda|physionet|beijing|m4\b|uea|psm"
     r"|darcy|navier|elasticity|plasticity|pipe|peptides|malnet|genomicbench|nucleotide"
     r"|long range arena|sequential|lambada|multi30k|snli|mnli|glue|superglue|squad|sts"
     r"|conll|ontonotes|race|yelp|commonsenseqa|openbookqa|medqa|codesearchnet|concode"
     r"|codexglue|devign|bigclonebench|code refinement|csl|alpaca|oasst|anthropic hh"
     r"|tl;dr|summarize|stanford human|mmlu|minipile|wmt|ljspeech|vctk|flickr\b"),
)
LARGE_MODEL = re.compile(r"\b(llama|vicuna|mistral|llava|opt-\d|gpt-j|pythia|qwen|falcon"
                         r"|\d+(?:\.\d+)?b\b|stable diffusion|latent diffusion|dinov2"
                         r"|vit-g)",  # ViT-L/H are medium in model_size.NAMES
                         re.IGNORECASE)
# import or requirement names -> why they are heavy on a sandboxed CPU machine
HEAVY_DEPS: dict[str, str] = {
    "mujoco": "MuJoCo simulator", "mujoco_py": "MuJoCo simulator (needs the C library)",
    "dm_control": "MuJoCo simulator", "atari_py": "Atari ROMs", "ale_py": "Atari ROMs",
    "pybullet": "physics simulator", "smac": "StarCraft II binary", "pysc2": "StarCraft II",
    "gfootball": "football engine", "detectron2": "built from source",
    "mmcv": "compiled ops", "mmdet": "mmcv stack", "mmseg": "mmcv stack",
    "pytorch3d": "built from source", "open3d": "large native wheel", "kaolin": "compiled ops",
    "dgl": "native graph library", "torch_scatter": "compiled extension",
    "torch_sparse": "compiled extension", "torch_cluster": "compiled extension",
    "fairseq": "built from source", "tensorflow": "second framework", "jax": "second framework",
    "horovod": "MPI build", "deepspeed": "compiled ops", "apex": "built from source",
    "pycocotools": "C extension", "nvdiffrast": "CUDA rasteriser", "spconv": "CUDA only",
}


def data_entries(datasets: list[str], stated: dict[str, tuple[str, str]] | None = None
                 ) -> list[dict[str, Any]]:
    """Each dataset's kind by the first name rule it matches; `stated`: where the repository
    states a dataset's source (corpus/data_sources.py), added to its evidence."""
    out, stated = [], stated or {}
    for name in datasets:
        kind, standin, rule = "medium", True, "no rule matched: assumed medium, common format"
        for k, feasible, pattern in DATA_RULES:
            if m := re.search(pattern, name, re.IGNORECASE):
                kind, standin, rule = k, feasible, f"matched '{m.group(0)}'"
                break
        if name in stated:
            where, url = stated[name]
            rule += f"; the repository gives its source at {where}: {url}"
        out.append({"name": name, "kind": kind, "standin_feasible": standin, "evidence": rule})
    return out


def model_size(curated: dict[str, Any], data: list[dict[str, Any]],
               from_repo: dict[str, Any] | None = None) -> dict[str, str]:
    """{size, evidence, where, code}: the repository's own evidence (corpus/model_size.py) when
    it has any, else the fallback from the curated facts (`where`/`code` empty)."""
    if from_repo:
        return from_repo
    fallback = "fallback, no model size found in the repository: "
    # the model family is named in the title, task or command (dataset names say data scale)
    text = " ".join(str(curated.get(k) or "") for k in ("paper_title", "task", "train_command"))
    if m := LARGE_MODEL.search(text):
        return _fallback("large", f"{fallback}the curated title/task/command names "
                                  f"'{m.group(0)}'")
    kinds = {d["kind"] for d in data}
    if kinds and kinds <= {"synthetic", "small", "simulator"}:
        return _fallback("small", fallback + "trains only on small, synthetic or simulated data")
    if "large" in kinds:
        big = next(d["name"] for d in data if d["kind"] == "large")
        return _fallback("medium", f"{fallback}trains on a large dataset ({big})")
    return _fallback("medium", fallback + "no small-scale signal")


def _fallback(size: str, evidence: str) -> dict[str, str]:
    return {"size": size, "evidence": evidence, "where": "", "code": ""}


def heavy_deps(declared: list[str], imported: list[str]) -> list[dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for source, names in (("dependency file", declared), ("import", imported)):
        for raw in names:
            name = re.split(r"[<>=!~\[ ;@]", raw.strip())[0]  # drop version specifiers
            key = name.lower().replace("-", "_").split(".")[0]
            if key in HEAVY_DEPS and key not in found:
                found[key] = {"name": key, "why": HEAVY_DEPS[key], "seen_in": source}
    return sorted(found.values(), key=lambda d: d["name"])


def verdict(data: list[dict[str, Any]], model: dict[str, Any], hard: list[str],
            heavy: list[dict[str, str]]) -> tuple[str, list[str]]:
    """(cpu_task, reasons) from the four answers: blockers first, then the work needed."""
    blockers, work = [], []
    if hard:
        blockers.append(f"hard CUDA-only code: {', '.join(hard)}")
    if model["size"] == "large":
        blockers.append(f"large model ({model['evidence']})")
    if data and not any(d["standin_feasible"] for d in data):
        work.append("no dataset with a feasible stand-in format")
    if model["size"] == "medium":
        work.append("medium model: shrink the configuration for CPU")
    if heavy:
        work.append("heavyweight dependencies: " + ", ".join(d["name"] for d in heavy))
    return ("unlikely" if blockers else "possible" if work else "likely"), blockers + work


def assess(curated: dict[str, Any], scan: dict[str, Any], declared: list[str],
           imported: list[str], from_repo: dict[str, Any] | None = None,
           stated: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """The `runnability` block of a scan; `from_repo`: model_size.read_model_size's answer;
    `stated`: where the repository states each dataset's source."""
    data = data_entries([str(x) for x in curated.get("datasets") or []], stated)
    model = model_size(curated, data, from_repo)
    hard = list((scan.get("cuda_only") or {}).get("hard") or [])
    heavy = heavy_deps(declared, imported)
    cpu_task, reasons = verdict(data, model, hard, heavy)
    return {"cpu_task": cpu_task, "reasons": reasons, "data": data, "model": model,
            "hard_cuda_deps": hard, "heavy_deps": heavy}
