"""The dataset card (README.md with the Hugging Face YAML header) of the built corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus import PACKAGE_DIR, difficulty, stats
from gpu2tpu.corpus.records import Considered
from gpu2tpu.corpus.scanner import SCANNER_VERSION
from gpu2tpu.corpus.schema import PROJECT_COLUMNS, TASK_COLUMNS

CHART_NAME = "difficulty.svg"
CITATION = """@misc{gpu2tpu_corpus,
  title        = {gpu2tpu corpus: PyTorch research projects pinned for GPU-to-TPU migration},
  author       = {{gpu2tpu contributors}},
  year         = {2026},
  howpublished = {\\url{https://huggingface.co/datasets/gpu2tpu/corpus}},
  note         = {revision REVISION}
}"""


def _feature_name(feature: Any) -> str:
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{k}: {_feature_name(v)}" for k, v in feature.items()) + "}"
    inner = getattr(feature, "feature", None)
    if inner is not None:
        return f"list<{_feature_name(inner)}>"
    return str(getattr(feature, "dtype", feature))


def _schema_table(columns: dict[str, tuple[Any, str]]) -> str:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    for name, (feature, meaning) in columns.items():
        kind = _feature_name(feature)
        if len(kind) > 60:  # long structs: name the type, the keys are listed elsewhere
            kind = kind.split("{")[0] + "{...}" + (">" if kind.startswith("list<") else "")
        lines.append(f"| `{name}` | {kind} | {meaning} |")
    return "\n".join(lines)


def _formula_table() -> str:
    lines = ["| component | weight | half at | counts summed |", "|---|---:|---:|---|"]
    for name, weight, half, keys in difficulty.COMPONENTS:
        shown = ", ".join("CUDA-only package count" if k == "deps" else k.replace("size:", "")
                          for k in keys)
        lines.append(f"| {name} | {weight:g} | {half:g} | {shown} |")
    return "\n".join(lines)


def _licence_table(projects: list[dict[str, Any]]) -> str:
    counts = Counter((str(r.get("licence")), str(r.get("split"))) for r in projects)
    lines = ["| licence (detected) | split | projects |", "|---|---|---:|"]
    for (spdx, split), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {spdx} | {split} | {n} |")
    return "\n".join(lines)


def _considered_table(rows: list[Considered]) -> str:
    counts = Counter((r.decision, r.reason) for r in rows)
    lines = ["| decision | reason | candidates |", "|---|---|---:|"]
    for (decision, reason), n in sorted(counts.items()):
        lines.append(f"| {decision} | {reason} | {n} |")
    lines.append(f"| **total** | | {len(rows)} |")
    return "\n".join(lines)


def header(splits: dict[str, dict[str, str]], n_rows: int) -> str:
    """YAML front matter; `splits` maps config -> split -> parquet path (empty splits omitted)."""
    configs = []
    for config, files in splits.items():
        if not files:
            continue
        entry: dict[str, Any] = {"config_name": config}
        if config == "projects":
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": p} for s, p in files.items()]
        configs.append(entry)
    size = "n<1K" if n_rows < 1000 else "1K<n<10K"
    meta = {
        "pretty_name": "gpu2tpu corpus",
        "license": "apache-2.0",
        "language": ["en"],
        "task_categories": ["other"],
        "tags": ["code", "pytorch", "tpu", "xla", "cuda", "code-migration", "benchmark"],
        "size_categories": [size],
        "configs": configs,
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n"


def render(splits: dict[str, dict[str, str]], projects: list[dict[str, Any]],
           tasks: list[dict[str, Any]], considered: list[Considered], revision: str) -> str:
    """The whole card text."""
    table = stats.domain_bucket(projects)
    n_main = sum(1 for r in projects if r.get("split") == "main")
    inclusion = (PACKAGE_DIR / "INCLUSION.md").read_text(encoding="utf-8").split("\n", 2)[-1]
    floors = ", ".join(f"tier {t}: {f}" for t, f in difficulty.TIER_FLOOR.items())
    buckets = ", ".join(f"{name} from {low}" for name, low in difficulty.BUCKETS)
    n_up = sum(1 for t in tasks if t.get("kind") == "upstream")
    tasks_note = (f"split `practice`: {len(tasks) - n_up} practice task(s) (code shipped); split "
                  f"`upstream`: {n_up} corpus project(s) pinned by repo, commit and tree id "
                  "(materialised and verified by `gpu2tpu tasks fetch`); each row a RunSpec."
                  if tasks else "No practice tasks yet: the `tasks` config appears once "
                  "`corpus/tasks/*/task.yaml` exist (empty splits are not listed, since "
                  "`datasets` cannot load a split with no rows).")
    body = f"""
# gpu2tpu corpus

{len(projects)} public PyTorch research projects, each pinned to one commit and profiled, without
running any of its code, for how much it depends on NVIDIA GPUs. It is the task pool of the gpu2tpu
benchmark, which measures coding agents that migrate such projects from GPUs to TPUs
(torch_xla). Revision `{revision}`.

- config `projects`: split `main` ({n_main} projects with permissive licences) and split
  `reference_only` ({len(projects) - n_main} projects whose licence does not allow redistributing
  the code; the records hold facts only).
- config `tasks`: {tasks_note}

The dataset contains metadata and facts only (repository names, commit ids, licences, counts,
paper titles, reported numbers), never code or README prose. Each project keeps its own licence;
cite the paper linked in `paper_url` when you use a project.

```python
from datasets import load_dataset
projects = load_dataset("gpu2tpu/corpus", "projects")        # or a local copy's path
import gpu2tpu.corpus; gpu2tpu.corpus.load("projects")        # the copy inside the package, offline
```

## Citation

```bibtex
{CITATION.replace("REVISION", revision)}
```

## Schema: `projects`

{_schema_table(PROJECT_COLUMNS)}

`counts` keys: {", ".join(f"`{k}`" for k in PROJECT_COLUMNS["counts"][0])}.

## Schema: `tasks`

{_schema_table(TASK_COLUMNS)}

## How it was built

1. Candidates: public GitHub repositories of PyTorch research code, plus repositories sought on
   purpose for custom CUDA kernels and CUDA-only packages.
2. Curation: for each candidate a curator read the snapshot (README, LICENSE, tree) and either
   wrote a record (`corpus/projects/<owner>__<name>.yaml`: paper, domain, task, datasets, training
   command, reported results) or logged why it was left out (`considered.tsv`, below).
3. Scan: `gpu2tpu corpus scan --all` (scanner version {SCANNER_VERSION}) read each snapshot at its
   pinned commit through `git ls-tree` / `git cat-file`, counted the constructs below in every
   Python file (comment lines removed), detected the licence from the LICENSE/COPYING text and read
   dependency files. No project code was run.
4. `gpu2tpu corpus check` validated every record; `gpu2tpu corpus build` wrote these files
   deterministically (same records, same bytes). `REVISION` is the first 12 hex digits of the
   SHA-256 of the parquet files' bytes, concatenated in path order.

## Inclusion criteria

{inclusion.strip()}

## Difficulty

Tier is the hardest kind of GPU dependency present: **0** device-agnostic; **1** CUDA runtime
idioms (`.cuda()`, `torch.cuda.*`, "cuda" strings, cudnn flags, pin_memory, non_blocking);
**2** precision, distribution or compilation (autocast, GradScaler, fp16, TF32 flags,
torch.distributed/DDP/NCCL, DataParallel, torch.compile); **3** custom kernels (`.cu` files,
cpp_extension, Triton kernels, numba.cuda) or CUDA-only packages (apex, flash_attn, xformers,
bitsandbytes, mamba_ssm, deepspeed, tinycudann, spconv, MinkowskiEngine, ...).

Score = min(100, round(floor[tier] + sum over components of weight x n / (n + half))), where n is
the component's summed count: each component saturates, worth half its weight at n = half.
Floors: {floors}. Buckets: {buckets}.

{_formula_table()}

The counts are static heuristics (regular expressions): they measure what the code mentions, not
what one run executes; boolean-mask indexing in particular is approximated.

## Distribution

Domain x difficulty bucket:

{stats.markdown_domain_table(table)}

Tiers:

{stats.markdown_tier_table(stats.tier_counts(projects))}

![projects per domain and difficulty]({CHART_NAME})

Licences:

{_licence_table(projects)}

## Candidates considered

Every candidate the curators looked at is in `considered.tsv` (repo, decision, reason, detail,
log).

{_considered_table(considered)}
"""
    return header(splits, len(projects) + len(tasks)) + body


def write_chart(out_dir: Path, projects: list[dict[str, Any]]) -> None:
    (out_dir / CHART_NAME).write_text(stats.svg_chart(stats.domain_bucket(projects)),
                                      encoding="utf-8")
