"""Explicit `datasets.Features` of the two configs, and record/task -> row conversion."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from datasets import Features, List, Value

from gpu2tpu.corpus import audits, data_facts, patterns, problem, results
from gpu2tpu.corpus.environment import ENVIRONMENT, ITEM_KEYS
from gpu2tpu.corpus.scanner import SIZE_KEYS
from gpu2tpu.tasks.spec import Goal, Performance, RunSpec

_S = Value("string")
_I = Value("int64")
_F = Value("float64")
_B = Value("bool")

# column -> (feature, description); the card's schema table is rendered from this.
PROJECT_COLUMNS: dict[str, tuple[Any, str]] = {
    "id": (_S, "owner__name, the record's file name"),
    "repo": (_S, "GitHub owner/name"),
    "commit": (_S, "pinned commit (40 hex), the one scanned"),
    "commit_date": (_S, "committer date of that commit (ISO 8601)"),
    "split": (_S, "main (permissive licence) or reference_only"),
    "paper_title": (_S, "exact title of the paper the repository implements"),
    "paper_url": (_S, "link to the paper (arXiv, proceedings, OpenReview)"),
    "paper_year": (_I, "year of the paper's first public version (for arXiv links, the year "
                   "in the arXiv id)"),
    "domain": (_S, "one of 12 research domains"),
    "task": (_S, "short task phrase"),
    "datasets": (List(_S), "datasets the project trains or evaluates on"),
    "train_command": (_S, "canonical training command from the README"),
    "reported_results": (List({"metric": _S, "value": _F, "dataset": _S, "config": _S}),
                         "numbers the README reports (facts only), each with the configuration, "
                         "model and dataset it belongs to (`config`)"),
    "command_result": ({"status": _S, "row": _I, "config": _S, "why": _S},
                       "which reported result `train_command` produces: status `matched` (`row` "
                       "indexes `reported_results`), `none` (the repository reports no result for "
                       "the command's configuration `config`) or `unknown` (not established), "
                       "with the evidence (file:line); null when nothing is reported"),
    "hardness_notes": (List(_S), "curator's short factual tags"),
    "licence": (_S, "SPDX id detected from the licence file"),
    "licence_permissive": (_B, "whether that licence allows redistribution"),
    "licence_seen": (_S, "SPDX id the curator read"),
    "size": ({k: _I for k in SIZE_KEYS}, "file counts, Python lines"),
    "dependency_files": (List(_S), "requirements / environment / setup files"),
    "pinned": (List({"name": _S, "version": _S}), "versions pinned with == (or conda =)"),
    "frameworks": ({k: _I for k in patterns.FRAMEWORKS}, "Python files importing each framework"),
    "cuda_only_deps": (List(_S), "packages with no CPU/XLA path (apex, flash_attn, ...) that "
                       "the repository names anywhere"),
    "hard_cuda_deps": (List(_S), "CUDA-only code the training path cannot run without "
                       "(makes tier 3)"),
    "cuda_only_evidence": (List({"name": _S, "status": _S, "where": _S, "code": _S, "via": _S}),
                           "one line per use site: hard / guarded / conditional / off_path / "
                           "declared, file:line, the code, the import chain for hard ones"),
    "train_entry_points": (List(_S), "likely training scripts"),
    "eval_entry_points": (List(_S), "likely evaluation scripts"),
    "counts": ({k: _I for k in patterns.CONSTRUCTS},
               "occurrences of GPU constructs and XLA hazards"),
    "missing_blobs": (_I, "files absent from the snapshot (fetch omits files of 4 MiB or more)"),
    "missing_scanned_blobs": (_I, "of those, Python / dependency / licence files"),
    "cpu_task": (_S, "could it become a runnable task on a CPU-only machine: likely / possible / "
                 "unlikely (an estimate)"),
    "cpu_task_reasons": (List(_S), "what stands in the way (blockers first)"),
    "data_assessment": (List({"name": _S, "kind": _S, "standin_feasible": _B, "evidence": _S}),
                        "per dataset: synthetic / small / medium / large / simulator, and "
                        "whether stand-in data in its format is feasible"),
    "model_size": ({"size": _S, "evidence": _S, "where": _S, "code": _S},
                   "small / medium / large, with the signal and where the repository states it "
                   "(file:line and the line; empty for the data-scale fallback)"),
    "heavy_deps": (List({"name": _S, "why": _S, "seen_in": _S}),
                   "dependencies hard to install on a sandboxed CPU machine"),
    "environment": ({kind: List({k: _S for k in keys}) for kind, keys in ITEM_KEYS.items()},
                    "what the project's own files state (requirements, setup, conda, Dockerfile, "
                    "README): Python / torch / CUDA versions, install commands and heavy or "
                    "obsolete stacks, each with file:line; null where the pinned tree was not read"),
    "data": (List({"name": _S, "dataset": _S, "size": _S, "source": _S, "licence_or_terms": _S,
                   "gated": _B, "standin": _S, "evidence": List(_S)}),
             "per dataset the project names: size, official source, licence or access terms "
             "(`unknown` where not established), gated or not (null: unknown, not established), "
             "the stand-in a task writes (null: none), evidence URLs (corpus/datasets.yaml); null "
             "when a name is not in the catalog"),
    "model_params": ({"params": _S, "where": _S, "code": _S, "model": _S},
                     "the model's parameter count as the pinned tree states it (file:line, the "
                     "line); null where the tree does not state one"),
    "problem_statement": (_S, "what `migrated` means for this project, the text an agent is "
                          "given (corpus/problem.py)"),
    "problem_claims": (List({"claim": _S, "source": _S}),
                       "each fact of the problem statement with the record field it comes from"),
    "audit_status": (_S, "verified (a second reader checked every audited field against the "
                     "pinned tree and every correction is applied), partly verified, "
                     "corrected-pending, or not audited (corpus/curation/audits/)"),
    "audit_fields": (List({"field": _S, "status": _S}),
                     "per audited field (gpu2tpu.corpus.audits.AUDIT_FIELDS) the record has: "
                     "verified, corrected-pending, unverifiable or not checked"),
    "tier": (Value("int8"), "0 device-agnostic .. 3 the training path needs CUDA-only code"),
    "flags": (List(_S), "derived tags"),
    "score": (_I, "difficulty score 0-100"),
    "bucket": (_S, "easy / medium / hard"),
    "scanner_version": (_S, "version of the scanner that made the scan"),
    "record_json": (_S, "the whole source record as JSON"),
}

def _fields_of(cls: Any) -> dict[str, Value]:
    """A nested column from a task dataclass (Goal, Performance): its fields, typed."""
    kinds = {"int": _I, "float": _F, "bool": _B, "str": _S}
    return {f.name: kinds[str(f.type)] for f in dataclasses.fields(cls)}


TASK_COLUMNS: dict[str, tuple[Any, str]] = {
    "task_id": (_S, "task directory name"),
    "title": (_S, "one-line title"),
    "description": (_S, "what the project does"),
    "command": (List(_S), "argv run inside the project copy"),
    "seed": (_I, "seed of the reference run"),
    "steps": (_I, "optimizer steps expected"),
    "reference_seeds": (List(_I), "extra seeds whose runs calibrate the numerics bands"),
    "seed_arg": (_S, "command-line argument that sets the seed (none: the harness offsets the "
                     "project's own seeding calls)"),
    "harness_seed": (_B, "the project never seeds: the harness seeds every generator first"),
    "target_chips": (_I, "chips the migration must use"),
    "precision_policy": (_S, "fp32 or bf16_allowed"),
    "protected": (List(_S), "paths a migration may not touch (stand-in data included)"),
    "checkpoint": (_S, "checkpoint path evaluate.py reads"),
    "goal": (_fields_of(Goal), "goal metric"),
    "performance": (_fields_of(Performance), "performance budget"),
    "fallback_allowlist": (List(_S), "aten ops allowed to fall back to CPU"),
    "timeout_s": (_F, "time limit of one run"),
    "kind": (_S, "practice (code shipped) or upstream (a corpus project at a pinned commit)"),
    "source_repo": (_S, "upstream: GitHub owner/name"),
    "source_commit": (_S, "upstream: the pinned commit"),
    "source_tree": (_S, "upstream: the commit's root tree id (every file is verified against it)"),
    "workdir": (_S, "upstream: where the command runs inside the tree"),
    "prepare_outputs": (List(_S), "stand-in data files prepare.py writes"),
    "hazards": (List(_S), "what a migration of this project can get wrong"),
    "spec_json": (_S, "the whole task.yaml as JSON"),
}

PROJECT_FEATURES = Features({k: f for k, (f, _) in PROJECT_COLUMNS.items()})
TASK_FEATURES = Features({k: f for k, (f, _) in TASK_COLUMNS.items()})
# config -> its features: the parquet schema the build writes and the card's `dataset_info`
# features both come from here (the one home of the schema).
CONFIG_FEATURES: dict[str, Features] = {"projects": PROJECT_FEATURES, "tasks": TASK_FEATURES}


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _strs(x: Any) -> list[str]:
    return [str(v) for v in x] if isinstance(x, list) else []


def _opt_str(x: Any) -> str | None:
    return None if x is None else str(x)


def _environment(env: Any) -> dict[str, Any] | None:
    """The record's environment field as its column (corpus/environment.py), null when not read."""
    if not isinstance(env, dict):
        return None
    return {kind: [{k: _opt_str(i.get(k)) for k in keys} for i in env.get(kind) or []
                   if isinstance(i, dict)] for kind, keys in ITEM_KEYS.items()}


def _data(rec: dict[str, Any]) -> list[dict[str, Any]] | None:
    try:
        facts = data_facts.data_facts(rec)
    except data_facts.CatalogError:  # `corpus check` names the unresolved dataset
        return None
    return [{**{k: _opt_str(f.get(k)) for k in ("name", "dataset", "size", "source",
                                                 "licence_or_terms")},
             "gated": _gated(f.get("gated")), "standin": f.get("standin") or None,
             "evidence": _strs(f.get("evidence"))} for f in facts]


def _gated(value: Any) -> bool | None:
    """The catalog's gated fact: true or false as stated, null where it is `unknown`."""
    return value if isinstance(value, bool) else None


def _command_result(cur: dict[str, Any]) -> dict[str, Any] | None:
    """The record's curated.command_result as its column (corpus/results.py), null when absent."""
    value = cur.get(results.COMMAND_RESULT)
    if not isinstance(value, dict):
        return None
    return {"status": results.status(cur), "row": results.command_row(cur),
            "config": _opt_str(value.get("config")), "why": _opt_str(value.get("why"))}


def _model_params(rec: dict[str, Any]) -> dict[str, str | None] | None:
    found = data_facts.model_params(str(rec.get("id")))
    return {k: _opt_str(found.get(k)) for k in ("params", "where", "code", "model")} if found else None


def _problem(rec: dict[str, Any]) -> dict[str, Any]:
    try:
        stated = problem.problem_statement(rec)
    except problem.ProblemError:  # `corpus check` names the missing field
        return {"problem_statement": None, "problem_claims": []}
    return {"problem_statement": stated["text"],
            "problem_claims": [{"claim": str(c["claim"]), "source": str(c["source"])}
                               for c in stated["claims"]]}


def project_row(rec: dict[str, Any]) -> dict[str, Any]:
    """One dataset row from a record (missing fields become nulls, never guesses)."""
    cur = rec.get("curated") or {}
    scan = rec.get("scan") or {}
    lic = scan.get("licence") or {}
    deps = scan.get("dependencies") or {}
    entry = scan.get("entry_points") or {}
    size = scan.get("size") or {}
    raw_cuda_only = scan.get("cuda_only")
    cuda_only: dict[str, Any] = raw_cuda_only if isinstance(raw_cuda_only, dict) else {}
    raw_run = scan.get("runnability")
    run: dict[str, Any] = raw_run if isinstance(raw_run, dict) else {}
    model = run.get("model") if isinstance(run.get("model"), dict) else {}
    reported = [r for r in cur.get("reported_results") or [] if isinstance(r, dict)]
    return {
        "id": _opt_str(rec.get("id")),
        "repo": _opt_str(rec.get("repo")),
        "commit": _opt_str(rec.get("commit")),
        "commit_date": _opt_str(scan.get("commit_date")),
        "split": _opt_str(rec.get("split")),
        "paper_title": _opt_str(cur.get("paper_title")),
        "paper_url": _opt_str(cur.get("paper_url")),
        "paper_year": _int(cur.get("paper_year")),
        "domain": _opt_str(cur.get("domain")),
        "task": _opt_str(cur.get("task")),
        "datasets": _strs(cur.get("datasets")),
        "train_command": _opt_str(cur.get("train_command")),
        "reported_results": [{"metric": _opt_str(r.get("metric")), "value": _num(r.get("value")),
                              "dataset": _opt_str(r.get("dataset")),
                              "config": _opt_str(r.get("config"))} for r in reported],
        "command_result": _command_result(cur),
        "hardness_notes": _strs(cur.get("hardness_notes")),
        "licence": _opt_str(lic.get("spdx")),
        "licence_permissive": bool(lic.get("permissive")) if lic else None,
        "licence_seen": _opt_str(cur.get("licence_seen")),
        "size": {k: int(size.get(k, 0) or 0) for k in SIZE_KEYS} if size else None,
        "dependency_files": _strs(deps.get("files")),
        "pinned": [{"name": str(k), "version": str(v)}
                   for k, v in sorted((deps.get("pinned") or {}).items())],
        "frameworks": ({k: int((scan.get("frameworks") or {}).get(k, 0))
                        for k in patterns.FRAMEWORKS} if scan else None),
        "cuda_only_deps": _strs(scan.get("cuda_only_deps")),
        "hard_cuda_deps": _strs(cuda_only.get("hard")),
        "cuda_only_evidence": [{k: _opt_str(e.get(k)) for k in ("name", "status", "where", "code",
                                                                 "via")}
                               for e in cuda_only.get("evidence") or [] if isinstance(e, dict)],
        "train_entry_points": _strs(entry.get("train")),
        "eval_entry_points": _strs(entry.get("eval")),
        "counts": ({k: int((scan.get("counts") or {}).get(k, 0)) for k in patterns.CONSTRUCTS}
                   if scan else None),
        "missing_blobs": _int(scan.get("missing_blobs")),
        "missing_scanned_blobs": _int(scan.get("missing_scanned_blobs")),
        "cpu_task": _opt_str(run.get("cpu_task")),
        "cpu_task_reasons": _strs(run.get("reasons")),
        "data_assessment": [{"name": _opt_str(d.get("name")), "kind": _opt_str(d.get("kind")),
                             "standin_feasible": bool(d.get("standin_feasible")),
                             "evidence": _opt_str(d.get("evidence"))}
                            for d in run.get("data") or [] if isinstance(d, dict)],
        "model_size": ({k: _opt_str(model.get(k)) for k in ("size", "evidence", "where", "code")}
                       if model else None),
        "heavy_deps": [{k: _opt_str(d.get(k)) for k in ("name", "why", "seen_in")}
                       for d in run.get("heavy_deps") or [] if isinstance(d, dict)],
        "environment": _environment(rec.get(ENVIRONMENT)),
        "data": _data(rec),
        "model_params": _model_params(rec),
        **_problem(rec),
        "audit_status": audits.record_status(rec),
        "audit_fields": [{"field": f, "status": st}
                         for f, st in audits.record_field_statuses(rec).items()],
        "tier": _int(scan.get("tier")),
        "flags": _strs(scan.get("flags")),
        "score": _int(scan.get("score")),
        "bucket": _opt_str(scan.get("bucket")),
        "scanner_version": _opt_str(scan.get("scanner_version")),
        "record_json": json.dumps(rec, sort_keys=True, ensure_ascii=False, default=str),
    }


def task_row(spec: RunSpec) -> dict[str, Any]:
    """One row of the `tasks` config from a loaded task (gpu2tpu.tasks reads and checks task.yaml)."""
    row: dict[str, Any] = {
        "task_id": spec.task_id, "title": spec.title, "description": spec.description,
        "command": list(spec.command), "seed": spec.seed, "steps": spec.steps,
        "reference_seeds": list(spec.reference_seeds), "seed_arg": spec.seed_arg,
        "harness_seed": spec.harness_seed, "target_chips": spec.target_chips,
        "precision_policy": spec.precision_policy, "protected": list(spec.protected),
        "checkpoint": spec.checkpoint, "goal": dataclasses.asdict(spec.goal),
        "performance": dataclasses.asdict(spec.performance),
        "fallback_allowlist": list(spec.fallback_allowlist), "timeout_s": spec.timeout_s,
        "kind": spec.kind, "source_repo": spec.source.repo if spec.source else None,
        "source_commit": spec.source.commit if spec.source else None,
        "source_tree": spec.source.tree if spec.source else None, "workdir": spec.workdir or None,
        "prepare_outputs": list(spec.prepare_outputs), "hazards": list(spec.hazards),
        "spec_json": json.dumps(spec.raw, sort_keys=True, ensure_ascii=False, default=str),
    }
    return {k: row[k] for k in TASK_COLUMNS}
