"""The dataset card (README.md with the Hugging Face YAML header) of the built corpus."""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from datasets import DatasetInfo
from datasets.info import DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from huggingface_hub import DatasetCardData

from gpu2tpu.corpus import PACKAGE_DIR, card_tables, difficulty, stats
from gpu2tpu.corpus.card_tables import Change
from gpu2tpu.corpus.records import Considered
from gpu2tpu.corpus.scanner import SCANNER_VERSION
from gpu2tpu.corpus.schema import CONFIG_FEATURES, PROJECT_COLUMNS, TASK_COLUMNS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the installed distribution's metadata only
    tomllib = None  # type: ignore[assignment]

CHART_NAME = "difficulty.svg"
STUDY_TITLE = "From GPU to TPU with Coding Agents: What Works, What Fails, and What It Costs?"
STUDY_SEARCH = ("https://arxiv.org/search/?searchtype=title&query="
                "From+GPU+to+TPU+with+Coding+Agents")
HUB_URL = "https://huggingface.co/datasets/gpu2tpu/corpus"
# The code repository, used only while pyproject.toml names none under [project.urls]
# (keys tried in order: CODE_URL_KEYS).
CODE_URL = "https://github.com/gpu2tpu/gpu2tpu"
CODE_URL_KEYS = ("repository", "source", "code", "homepage")
STUDY_RELATION = (
    f"The study *{STUDY_TITLE}* built a 148-project corpus; this corpus is gpu2tpu's own list of "
    "the same size, not a copy of it: the candidates, the records, the selection rule and every "
    "`file:line:code` piece of evidence were made by this project from the repositories at their "
    "pinned commits.")


@dataclass(frozen=True)
class SplitSize:
    """One written split: rows, Arrow bytes in memory (`num_bytes`), parquet file bytes."""

    num_examples: int
    num_bytes: int
    download_bytes: int


def code_url(pyproject: Path = PACKAGE_DIR.parent / "pyproject.toml") -> str:
    """The code repository: pyproject's [project.urls] (the source tree's file, else the
    installed distribution's metadata), else CODE_URL."""
    urls: dict[str, str] = {}
    if tomllib is not None and pyproject.is_file():
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        urls = {str(k).lower(): str(v) for k, v in (project.get("urls") or {}).items()}
    else:
        try:
            entries = importlib.metadata.metadata("gpu2tpu").get_all("Project-URL") or []
        except importlib.metadata.PackageNotFoundError:
            entries = []
        urls = {k.strip().lower(): v.strip() for k, _, v in (e.partition(",") for e in entries)}
    return next((urls[k] for k in CODE_URL_KEYS if urls.get(k)), CODE_URL)
EXAMPLE_PREFERENCE = ("tkipf/pygcn",)  # a small project that is also an upstream task
CITATION = """@misc{gpu2tpu_corpus,
  title        = {gpu2tpu corpus: PyTorch research projects pinned for GPU-to-TPU migration},
  author       = {{gpu2tpu contributors}},
  year         = {2026},
  howpublished = {\\url{https://huggingface.co/datasets/gpu2tpu/corpus}},
  note         = {revision REVISION}
}"""


def dataset_info(sizes: dict[str, dict[str, SplitSize]]) -> list[dict[str, Any]]:
    """The card's `dataset_info`, one entry per config with rows: features from the schema the
    build writes (CONFIG_FEATURES), split rows and bytes, download and dataset sizes; written by
    `datasets`' own serialiser, so the Hub and `load_dataset` read it back as they wrote it."""
    infos = DatasetInfosDict()
    for config, split_sizes in sizes.items():
        if not split_sizes:
            continue
        split_dict = SplitDict()
        for name, size in split_sizes.items():
            split_dict.add(SplitInfo(name=name, num_bytes=size.num_bytes,
                                     num_examples=size.num_examples))
        infos[config] = DatasetInfo(
            features=CONFIG_FEATURES[config], splits=split_dict, config_name=config,
            download_size=sum(z.download_bytes for z in split_sizes.values()),
            dataset_size=sum(z.num_bytes for z in split_sizes.values()))
    data = DatasetCardData()
    infos.to_dataset_card_data(data)
    got = data.to_dict().get("dataset_info", [])
    return got if isinstance(got, list) else [got]


def header(splits: dict[str, dict[str, str]], n_rows: int,
           sizes: dict[str, dict[str, SplitSize]] | None = None) -> str:
    """YAML front matter; `splits` maps config -> split -> parquet path (empty splits omitted);
    `sizes` maps config -> split -> its sizes (written as `dataset_info`)."""
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
    if sizes:
        meta["dataset_info"] = dataset_info(sizes)
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n"


def example_record(projects: list[dict[str, Any]]) -> str:
    """One `projects` row as JSON (the preferred example if present, else the first main row;
    `record_json` and the long count maps shortened)."""
    main = [r for r in projects if r.get("split") == "main"] or projects
    if not main:
        return "{}"
    row = next((r for r in main if r.get("repo") in EXAMPLE_PREFERENCE), main[0])
    shown = {k: v for k, v in row.items() if k != "record_json"}
    shown["counts"] = {k: v for k, v in (row.get("counts") or {}).items() if v}
    shown["record_json"] = "... (the whole source record as JSON)"
    return json.dumps(shown, indent=1, ensure_ascii=False, default=str)


def render(splits: dict[str, dict[str, str]], projects: list[dict[str, Any]],
           tasks: list[dict[str, Any]], considered: list[Considered], revision: str,
           sizes: dict[str, dict[str, SplitSize]], changes: list[Change]) -> str:
    """The whole card text (`sizes`: config -> split -> sizes of the written parquet;
    `changes`: the changelog, newest first)."""
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
                  "`tasks/*/task.yaml` exist (empty splits are not listed, since "
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
paper titles, reported numbers), never code or README prose.

**Licence.** The card's licence (Apache-2.0) covers this metadata only. Each project keeps its
own licence (column `licence`, detected from its LICENSE file at the pinned commit); the code is
never redistributed here and is fetched from its repository at the pinned commit when a task runs.
Cite the paper linked in `paper_url` when you use a project.

## Links

- Code: {code_url()}, the `gpu2tpu` Python package (one distribution): `corpus/` builds
  this dataset, `harness/` grades migrations, `leaderboard/` ranks them. Dataset on the Hub:
  {HUB_URL}.
- Leaderboard: built by the same package (`gpu2tpu leaderboard ...`, a DuckDB store and a static
  page); results are tied to this card's revision.
- The study gpu2tpu builds on: *{STUDY_TITLE}* (arXiv preprint; {STUDY_SEARCH}).

**Relation to the study.** {STUDY_RELATION}

## Example record (`projects`, split `main`)

```json
{example_record(projects)}
```

Zero counts are left out and `record_json` is abbreviated here; the dataset holds them in full.

## How tasks are graded

A project becomes a task when it has a `task.yaml` (RunSpec: command, seed, steps, stand-in data,
target chips, precision policy, protected paths, goal, performance budget), a harness-owned
`evaluate.py` and a gold migration proving it solvable. An agent's migration is run under a probe
next to the original code's reference runs, and five criteria, pure functions over the two traces,
decide:

1. **runs**: exit status 0, the expected optimizer steps reached, within the time limit;
2. **numerics**: step-0 loss and gradient norm, and the loss curve, within a band calibrated from
   the reference runs' own spread; optimizer, learning rates, clipping, batch size and step count
   unchanged (precision changes only where the task's policy allows, e.g. fp16 -> bf16);
3. **hardware**: parameters and loss on the target XLA/TPU device, the chips the task asks for,
   CPU fallbacks within the task's allowlist;
4. **goal**: the project's goal metric, computed by harness code, within tolerance of the reference;
5. **performance**: bounded recompilation and host syncs, step time within the task's budget.

A migration counts as migrated only when all five pass; a failure whose process exited 0 is
reported as silent. Printed text is never trusted: verdicts come from exit codes and the probe's
records. Infrastructure failures are labelled `infra` and kept out of scores.

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

{card_tables.schema_table(PROJECT_COLUMNS)}

`counts` keys: {", ".join(f"`{k}`" for k in PROJECT_COLUMNS["counts"][0])}.

## Schema: `tasks`

{card_tables.schema_table(TASK_COLUMNS)}

## How it was built

1. Candidates: public GitHub repositories of PyTorch research code, plus repositories sought on
   purpose for custom CUDA kernels and CUDA-only packages.
2. Curation: for each candidate a curator read the snapshot (README, LICENSE, tree) and either
   wrote a record (`corpus/projects/<owner>__<name>.yaml`: paper, domain, task, datasets, training
   command, reported results, each with the configuration it belongs to, and which of them the
   training command produces, with file:line evidence) or logged why it was left out
   (`considered.tsv`, below).
   Which eligible candidates fill the slots is computed by a stated rule (`gpu2tpu corpus
   select`: owner cap, one preference key, domain cap; see Inclusion criteria, point 8).
3. Scan: `gpu2tpu corpus scan --all` (scanner version {SCANNER_VERSION}) read each snapshot at its
   pinned commit through `git ls-tree` / `git cat-file`, counted the constructs below in every
   Python file (comment lines removed), detected the licence from the LICENSE/COPYING text and read
   dependency files. From the record's training command it follows the import graph (Python
   `ast`) to tell hard CUDA-only dependencies from guarded, conditional or off-path ones, each
   with its file:line, and estimates CPU runnability. No project code was run.
4. `gpu2tpu corpus check` validated every record; `gpu2tpu corpus build` wrote these files
   deterministically (same records, same bytes). `REVISION` is the first 12 hex digits of the
   SHA-256 of the rows as written (each split's rows as canonical JSON, in path order): the
   content, not the parquet writer's bytes, so another pyarrow version gives the same revision.

## Second reads, data facts, problem statements

{card_tables.second_reads(projects)}

## Inclusion criteria

{inclusion.strip()}

## Difficulty

Tier is the hardest kind of GPU dependency present: **0** device-agnostic; **1** CUDA runtime
idioms (`.cuda()`, `torch.cuda.*`, "cuda" strings, cudnn flags, pin_memory, non_blocking);
**2** precision, distribution or compilation (autocast, GradScaler, fp16, TF32 flags,
torch.distributed/DDP/NCCL, DataParallel, torch.compile); **3** the training path cannot run
without CUDA-only code: a `hard` use site (module-level, unguarded, in a file the training entry
loads) of a custom kernel (compiled CUDA extension, `cpp_extension.load`, Triton, numba.cuda) or
a CUDA-only package (apex, flash_attn, xformers, bitsandbytes, mamba_ssm, deepspeed, tinycudann,
spconv, ...). Guarded (try/except with a fallback), conditional (behind an `if` or inside a
function), off-path (evaluation, tools) and declared-only uses are listed in
`cuda_only_evidence` but do not make tier 3.

Score = min(100, round(floor[tier] + sum over components of weight x n / (n + half))), where n is
the component's summed count: each component saturates, worth half its weight at n = half.
Floors: {floors}. Buckets: {buckets}.

{card_tables.formula_table()}

The counts are static heuristics (regular expressions): they measure what the code mentions, not
what one run executes; boolean-mask indexing in particular is approximated. The problem
statements' host syncs and data-dependent shapes are counted as call sites (one on a host tensor
counts; a chain like `.cpu().numpy()` is one) in the code the training entry
reaches: the files it imports, less the functions, classes and imported `__main__` blocks that
nothing reached names (by name, statically; code behind a run-time condition still counts).

## Distribution

Domain x difficulty bucket:

{stats.markdown_domain_table(table)}

Tiers:

{stats.markdown_tier_table(stats.tier_counts(projects))}

CPU runnability (could the project become a runnable task on a CPU-only machine; an estimate with
reasons in `cpu_task_reasons`; the queue for the next upstream tasks):

{card_tables.runnability_table(projects)}

![projects per domain and difficulty]({CHART_NAME})

Licences:

{card_tables.licence_table(projects)}

## Candidates considered

Every candidate the curators looked at is in `considered.tsv` (repo, decision, reason, detail,
log).

{card_tables.considered_table(considered)}

## Changelog

What changed between revisions, newest first, generated from the curation logs in
`corpus/curation/` (rebalance and change notes; the reasons are the removed projects' rows in the
considered logs).

{card_tables.changelog(changes)}
"""
    return header(splits, len(projects) + len(tasks), sizes) + body + LIMITATIONS


LIMITATIONS = """
## Limitations

- Static analysis only: no project was installed or run. Counts are regular expressions over
  Python source; the tier comes from an import-graph analysis (Python `ast`) from the curated
  training command. Code loaded by name from configuration that the scanner cannot resolve, or
  imports resolved by suffix to the wrong file, can misplace a dependency; each record lists its
  evidence (file:line, import chain) so a reader can check.
- One commit per project: later fixes upstream are not reflected; reported results are the
  README's numbers, not reproduced here.
- Licences are detected from licence text by phrase matching; `licence_seen` is the curator's
  reading. Where they differ, the repository's own licence file is authoritative.
- Selection: candidates come from curators' searches and are biased toward popular, English,
  GitHub-hosted projects with a paper; domain quotas and the per-owner limit shape the mix
  (see Candidates considered). The corpus is not a random sample of research code.
- Runnability estimates (CPU stand-in data, model size, heavyweight dependencies) are estimates
  for choosing the next tasks, not guarantees.
"""


def write_chart(out_dir: Path, projects: list[dict[str, Any]]) -> None:
    (out_dir / CHART_NAME).write_text(stats.svg_chart(stats.domain_bucket(projects)),
                                      encoding="utf-8")
