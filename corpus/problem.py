"""A problem statement per record (issue 25): what "migrated" means for one project, with sources.

`problem_statement(record)` returns {"text": str, "claims": [{"claim": str, "source": str}]}, the
field an agent is given (like SWE-bench's `problem_statement`). The text is made only of claims
and of the fixed GUIDANCE sentences, which state no fact about the record. Every claim is one
sentence taken from one record field, which its `source` names:

  FIELD      dotted keys and [index]: `curated.train_command`, `curated.reported_results[0]`,
             `scan.training_path_counts.item`, `environment.torch[0]`
  .{a,b}     at the end: some keys of one mapping, `scan.counts.{cuda_call,torch_cuda}`
  at F:L     after it, for an item with a `where`: the file:line the item states

`resolve(record, source)` returns the value a source names and checks its file:line. Call sites
of host syncs and data-dependent shapes (whatever their receiver: the scan does not know where a
tensor lives) are counted on the training path (`scan.training_path_counts`: the code the training
entry reaches, reach.py), the other constructs in the whole repository (`scan.counts`); each
sentence starts with which. The goal metric is the reported result the record says its command
produces (`curated.command_result`, corpus/results.py), never merely the first row; where the
repository reports none for the command, or which one is not established, the text says so.
Deterministic: the same record gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from gpu2tpu.corpus import results
from gpu2tpu.corpus.environment import ENVIRONMENT, STACKS
from gpu2tpu.corpus.patterns import CONSTRUCTS

# (field, type): what a statement cannot be written without
REQUIRED: tuple[tuple[str, type], ...] = (
    ("repo", str), ("commit", str), ("curated.train_command", str),
    ("curated.reported_results", list), ("scan.counts", dict),
    ("scan.training_path_counts", dict), ("scan.cuda_only", dict))

# fixed sentences: instructions, true of every record (the text holds these and claims only)
GUIDANCE = (
    "Migrate this PyTorch project to TPU (torch_xla) without changing how it trains.",
    "Keep data and order, model, optimizer and hyper-parameters, schedule, loss, clipping, "
    "seeds, batch size and step count as they are.",
    "Migrated means: the command runs on the TPU, matches the GPU reference's configuration, "
    "loss curve and goal metric, and adds no recompilation storm or per-step host sync.",
)

# construct -> the words an engineer reads (patterns.CONSTRUCTS names the same constructs)
LABELS = {
    "cuda_call": "`.cuda()`", "torch_cuda": "`torch.cuda.*`", "cuda_string": '"cuda" strings',
    "cudnn_flags": "cuDNN flags", "pin_memory": "pin_memory", "non_blocking": "non_blocking",
    "autocast": "autocast", "grad_scaler": "GradScaler", "half_precision": "float16 casts",
    "tf32_flags": "TF32 flags", "distributed": "torch.distributed/DDP",
    "data_parallel": "DataParallel", "torch_compile": "torch.compile", "apex": "apex",
    "cpp_extension": "C++/CUDA extensions", "triton": "Triton imports",
    "triton_kernel": "Triton kernels", "numba_cuda": "numba.cuda",
    "clip_grad_norm": "gradient clipping", "sdpa": "scaled_dot_product_attention",
    "grad_checkpointing": "activation checkpointing", "item": "`.item()`",
    "host_transfer": "`.cpu()`/`.numpy()`/`.tolist()`", "nonzero": "nonzero/argwhere",
    "bool_mask_index": "boolean-mask indexing", "unique": "unique",
    "masked_select": "masked_select",
}
assert LABELS.keys() == CONSTRUCTS.keys()

TRAINING_PATH, REPOSITORY = "scan.training_path_counts", "scan.counts"
PRECISION = ("autocast", "grad_scaler", "half_precision", "apex")
# (field, constructs, what they mean on XLA): one sentence per group with a nonzero count
HAZARDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (TRAINING_PATH, ("item", "host_transfer"),
     "call sites; on a device tensor the run reaches, each is a host sync on XLA; a chain like "
     "`.cpu().numpy()` is one"),
    (TRAINING_PATH, ("nonzero", "bool_mask_index", "unique", "masked_select"),
     "call sites; on a device tensor the run reaches, each data-dependent shape recompiles on "
     "XLA"),
    (REPOSITORY, ("cuda_call", "torch_cuda", "cuda_string", "cudnn_flags", "tf32_flags",
                  "pin_memory", "non_blocking"), "CUDA device code: use the XLA device"),
    (REPOSITORY, PRECISION, "fp16 may become bf16, no other precision change"),
    (REPOSITORY, ("distributed", "data_parallel"),
     "multi-GPU code: use torch_xla's backend, same global batch"),
    (REPOSITORY, ("torch_compile",), "use the openxla backend or none"),
    (REPOSITORY, ("cpp_extension", "triton", "triton_kernel", "numba_cuda"),
     "custom kernels built for CUDA: XLA runs a PyTorch path instead, the repository's "
     "own fallback where it has one"),
)
WHERE_COUNTED = {TRAINING_PATH: "In the code the training entry can reach",
                 REPOSITORY: "Repository"}
# said once, with the first training-path count: what that code is (corpus/reach.py)
REACH_MEANS = ("uncalled functions left out; code behind options the command leaves off may "
               "still count")
# hard names that are not CUDA packages themselves (a second read added each to a record)
NAMED_DEPENDENCIES = {"horovod": "a distribution layer with no XLA backend",
                      "nvidia-smi": "NVIDIA's command-line tool, run by the configuration"}
MAX_RESULTS = 2  # reported results told: the command's row, its configuration's, then others'
MAX_HARD = 3  # hard CUDA-only names told with their first site; more are listed by name
MAX_FLAGS = 2  # obsolete or heavy stacks the project states
_SOURCE = re.compile(r"^(?P<path>[A-Za-z_][\w.\[\]]*?)(?:\.\{(?P<keys>[\w,]+)\})?"
                     r"(?: at (?P<where>\S+:\d+))?$")
_STEP = re.compile(r"\.?([A-Za-z_]\w*)|\[(\d+)\]")


Sentence = tuple[str, str | None]  # (text, source); no source: a GUIDANCE sentence


class ProblemError(ValueError):
    """A record lacks what a problem statement needs (names the field and the fix)."""


def _get(record: dict[str, Any], path: str) -> Any:
    """The value at a dotted path with [index] steps; KeyError naming the step when absent."""
    value: Any = record
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if not m or (pos and not m.group(0).startswith((".", "["))):
            raise KeyError(f"{path!r} is not a field path (dotted keys and [index])")
        key, index = m.group(1), m.group(2)
        if key is not None and isinstance(value, dict) and key in value:
            value = value[key]
        elif index is not None and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            raise KeyError(f"{path[:m.end()]} is absent")
        pos = m.end()
    return value


def resolve(record: dict[str, Any], source: str) -> Any:
    """The value a claim's source names: one field, or {key: value} for `.{a,b}`."""
    m = _SOURCE.match(source)
    if not m:
        raise KeyError(f"{source!r} is not a source (FIELD[.{{a,b}}][ at FILE:LINE])")
    value = _get(record, m["path"])
    if m["keys"]:
        value = {k: _get(value, k) for k in m["keys"].split(",")}
    if m["where"] and not (isinstance(value, dict) and value.get("where") == m["where"]):
        raise KeyError(f"{source}: the item's where is not {m['where']}")
    return value


def _check(record: dict[str, Any]) -> None:
    name = record.get("id") or record.get("repo") or "the record"
    for field, kind in REQUIRED:
        try:
            value = _get(record, field)
        except KeyError:
            value = None
        if not isinstance(value, kind):
            want = "a list ([] if none)" if kind is list else f"a {kind.__name__}"
            raise ProblemError(f"{name}: {field} must be {want} for a problem statement; fill it "
                               "(and the scan: gpu2tpu corpus scan --record FILE), then run "
                               "gpu2tpu corpus check")
    if record["curated"]["reported_results"] and results.status(record["curated"]) is None:
        raise ProblemError(f"{name}: curated.{results.COMMAND_RESULT} must say which reported "
                           "result the train_command produces ({config, row: N | none | "
                           "unknown, why}; gpu2tpu.corpus.results), then run gpu2tpu corpus "
                           "check")


def _result(r: dict[str, Any]) -> str:
    where = f" on {r['dataset']}" if r.get("dataset") else ""
    return f"{r.get('metric')} {r.get('value')}{where}"


def _goal(cur: dict[str, Any]) -> list[Sentence]:
    """The goal metric: the row the record says its command produces (curated.command_result),
    else a plain statement that the repository reports none for it, or that which one is not
    established; then up to MAX_RESULTS rows in all, the command's configuration first."""
    field = "curated.reported_results"
    rows = [(i, r) for i, r in enumerate(cur["reported_results"]) if isinstance(r, dict)]
    if not rows:
        return [("No README-reported goal metric is recorded.", field)]
    match, chosen = results.status(cur), results.command_row(cur)
    config = str(cur[results.COMMAND_RESULT]["config"]) if match else ""
    out: list[Sentence] = []
    if chosen is not None:
        out.append((f"Goal metric (README, for this command's configuration: {config}): "
                    f"{_result(cur['reported_results'][chosen])}.", f"{field}[{chosen}]"))
    elif match == results.NONE:
        out.append((f"The repository reports no result for this command's configuration "
                    f"({config}).", f"curated.{results.COMMAND_RESULT}"))
    else:
        out.append((f"Which reported result this command's configuration ({config}) produces "
                    "is not established.", f"curated.{results.COMMAND_RESULT}"))
    maybe = results.candidates(cur)
    same = [(i, r) for i, r in rows if i != chosen and r.get("config") == config]
    by_index = dict(rows)
    likely = [(i, by_index[i]) for i in maybe if i in by_index
              and by_index[i].get("config") != config]
    other = [(i, r) for i, r in rows if i != chosen and i not in maybe
             and r.get("config") != config]
    for i, r in (same + likely + other)[:MAX_RESULTS - (chosen is not None)]:
        whose = ("Also reported for this configuration" if r.get("config") == config
                 else f"Possibly this command's, reported for {r.get('config')}" if i in maybe
                 else f"Reported for {r.get('config')}")
        out.append((f"{whose}: {_result(r)}.", f"{field}[{i}]"))
    return out


def _hazards(scan: dict[str, Any]) -> list[Sentence]:
    out: list[Sentence] = []
    said_reach = False
    for field, keys, means in HAZARDS:
        counts = _get(scan, field.removeprefix("scan."))
        found = [k for k in keys if isinstance(counts.get(k), int) and counts[k] > 0]
        if found:
            sites = ", ".join(f"{LABELS[k]} {counts[k]}" for k in found)
            named = found[0] if len(found) == 1 else f"{{{','.join(found)}}}"
            where = WHERE_COUNTED[field]
            if field == TRAINING_PATH and not said_reach:
                where, said_reach = f"{where} ({REACH_MEANS})", True
            out.append((f"{where}: {sites} ({means}).", f"{field}.{named}"))
        elif keys == PRECISION and all(k in counts for k in keys):
            out.append(("Repository: no autocast, GradScaler, float16 cast or apex (keep the "
                        "precision).", f"{field}.{{{','.join(keys)}}}"))
    if not any(scan["counts"].values()):
        out.append(("The scan counts no GPU construct or XLA hazard.", REPOSITORY))
    return out


def _dependency(name: str) -> str:
    if name.startswith("kernel:"):
        return "a compiled CUDA module"
    if name == "cpp_extension.load":
        return "a CUDA extension built at import"
    if name == "torch.ops.load_library":
        return "a compiled op library"
    return NAMED_DEPENDENCIES.get(name, "a CUDA-only package")


def _hard(cuda_only: dict[str, Any]) -> list[Sentence]:
    hard = [h for h in cuda_only.get("hard") or [] if isinstance(h, str)]
    if not hard:
        return [("No hard CUDA-only dependency is on the training path.", "scan.cuda_only.hard")]
    evidence = cuda_only.get("evidence") or []
    out: list[Sentence] = []
    for i, name in enumerate(hard[:MAX_HARD]):
        site = next((j for j, e in enumerate(evidence) if isinstance(e, dict)
                     and e.get("name") == name and e.get("status") == "hard" and e.get("where")),
                    None)
        if site is None:
            out.append((f"Hard CUDA-only dependency {name} ({_dependency(name)}) on the training "
                        "path: replace it for XLA.", f"scan.cuda_only.hard[{i}]"))
            continue
        where = evidence[site]["where"]
        out.append((f"Hard CUDA-only dependency {name} ({_dependency(name)}), used at {where}: "
                    "replace it for XLA.", f"scan.cuda_only.evidence[{site}] at {where}"))
    if len(hard) > MAX_HARD:
        out.append((f"Hard CUDA-only dependencies in all: {', '.join(hard)}.",
                    "scan.cuda_only.hard"))
    return out


def _environment(env: Any) -> list[Sentence]:
    if not isinstance(env, dict):
        return []
    out: list[Sentence] = []
    for kind, word in (("torch", "torch"), ("cuda", "CUDA")):
        items = env.get(kind) or []
        if items and isinstance(items[0], dict) and items[0].get("where"):
            where = items[0]["where"]
            out.append((f"Stated {word}: {items[0].get('version')} ({where}).",
                        f"{ENVIRONMENT}.{kind}[0] at {where}"))
    flags = [(i, f) for i, f in enumerate(env.get("flags") or []) if isinstance(f, dict)
             and f.get("where") and f.get("stack") in STACKS]
    for i, flag in flags[:MAX_FLAGS]:
        where = flag["where"]
        out.append((f"Stated stack {flag['stack']} ({where}): {STACKS[flag['stack']]}.",
                    f"{ENVIRONMENT}.flags[{i}] at {where}"))
    return out


def problem_statement(record: dict[str, Any]) -> dict[str, Any]:
    """The statement an agent is given for one record, each fact with the field it came from."""
    _check(record)
    cur, scan = record["curated"], record["scan"]
    roots = [r for r in scan["cuda_only"].get("training_roots") or [] if isinstance(r, str)]
    paragraphs: list[list[Sentence]] = [
        [(GUIDANCE[0], None), (f"Repository: {record['repo']}.", "repo"),
         (f"Pinned commit: {record['commit']}.", "commit")],
        [(f"Command to keep working: `{cur['train_command']}`.", "curated.train_command")]
        + ([(f"Training entry: {', '.join(roots)}.", "scan.cuda_only.training_roots")]
           if roots else [])
        + _goal(cur),
        [(GUIDANCE[1], None)] + _hazards(scan),
        _hard(scan["cuda_only"]) + _environment(record.get(ENVIRONMENT)),
        [(GUIDANCE[2], None)],
    ]
    text = "\n\n".join(" ".join(s for s, _ in p) for p in paragraphs if p) + "\n"
    claims = [{"claim": s, "source": src} for p in paragraphs for s, src in p if src]
    return {"text": text, "claims": claims}


def register(csub: argparse._SubParsersAction) -> None:
    """`gpu2tpu corpus problem RECORD.yaml`: print a record's problem statement."""
    p = csub.add_parser("problem", help="print a record's problem statement (what migrated "
                        "means for it, each fact with its source field)",
                        description="Print the problem statement an agent is given for one "
                        "corpus record: repository and commit, training command, goal metric, "
                        "what must stay the same, the hazards the scan found. Deterministic.")
    p.add_argument("record", type=Path, help="a corpus/projects/<id>.yaml record")
    p.add_argument("--json", action="store_true", help="print {text, claims} as JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from gpu2tpu.corpus.records import load_record
    from gpu2tpu.errors import UserError

    rec = load_record(args.record)
    if rec.data is None:
        raise UserError(f"{args.record}: {rec.error}; give a corpus record (corpus/projects/*.yaml)")
    try:
        statement = problem_statement(rec.data)
    except ProblemError as exc:
        raise UserError(f"{args.record}: {exc}") from exc
    print(json.dumps(statement, indent=2, ensure_ascii=False) if args.json
          else statement["text"], end="\n" if args.json else "")
    return 0
