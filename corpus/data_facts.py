"""Facts about each project's data and model size (issue 25), read from two curated files.

corpus/datasets.yaml: one entry per distinct dataset any record names. Per entry: `aliases` (the
other spellings records use, matched exactly: no fuzzy matching at read time), `size` (as the
source states it), `source` (the official URL), `licence_or_terms`, `gated` (one must register,
accept terms or request access), `standin` (the task or kit writer that writes stand-in data in
its format, else false) and `evidence` (the URLs the facts come from). Unknown facts say "unknown".
Optional `second_read` (ok / corrected / unverifiable): the outcome of a second check of the facts
against the URLs in `evidence`; catalog_read_summary() counts them.

corpus/curation/model-params.yaml: `<id>: {params, where, code, model?}`, a parameter count only
where the project's own pinned tree states it (`where` is path:line of that tree, `code` that line
or the part of it stating the count, `model` which model when the tree lists several). Absent means
the tree does not state it.

The lead wires `data_facts` and `model_params` into the dataset columns, the card and the check.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus.records import parse_yaml
from gpu2tpu.errors import UserError
from gpu2tpu.tasks import KIT_NAME

PACKAGE_DIR = Path(__file__).resolve().parent
CATALOG_PATH = PACKAGE_DIR / "datasets.yaml"
MODEL_PARAMS_PATH = PACKAGE_DIR / "curation" / "model-params.yaml"
TASKS_DIR = PACKAGE_DIR.parent / "tasks"  # the gpu2tpu.tasks package folder (package-dir mapping)

FACT_KEYS = ("size", "source", "licence_or_terms", "gated", "standin", "evidence")
# second_read: the outcome of checking the entry's facts against their sources a second time
SECOND_READ_VALUES = ("ok", "corrected", "unverifiable")
ENTRY_KEYS = ("aliases",) + FACT_KEYS + ("second_read",)
PARAM_KEYS = ("params", "where", "code")
PARAM_OPTIONAL = ("model",)  # which model the count is for, where the tree states several
UNKNOWN = "unknown"
_URL = re.compile(r"^https?://\S+$")
_WHERE = re.compile(r"^[^\s:]+:[1-9]\d*$")
# a stand-in names where it is written: tasks/<task id>/prepare.py, optionally with a note after it
_STANDIN = re.compile(r"^tasks/([\w.\-]+)/prepare\.py\b")
# a kit helper a stand-in names (`kit.class_images`, `task_kit.write_cora`; not the file task_kit.py)
KIT_MENTION = re.compile(r"\b(?:task_)?kit\.(?!py\b)([A-Za-z_]\w*)")
_PARAMS = re.compile(r"^\d+(?:\.\d+)?\s*[KMBT]?$")
CODE_MAX = 240


class CatalogError(UserError):
    """A malformed datasets.yaml or model-params.yaml entry, or a record naming no entry."""


def _text_problem(value: Any, allow_unknown: bool = True) -> str | None:
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        return "must be one non-empty line of text"
    if not allow_unknown and value == UNKNOWN:
        return "must not be 'unknown'"
    return None


@lru_cache(maxsize=4)
def kit_helpers(kit: Path = TASKS_DIR / KIT_NAME) -> frozenset[str]:
    """The names the task kit defines at its top level (functions, classes, constants), read with
    `ast` (never imported); empty when there is no kit."""
    try:
        tree = ast.parse(kit.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return frozenset()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def unknown_kit_helpers(text: str, kit: Path = TASKS_DIR / KIT_NAME) -> list[str]:
    """The kit helpers `text` names (`kit.NAME`) that the kit does not define, in order."""
    known = kit_helpers(kit)
    return list(dict.fromkeys(n for n in KIT_MENTION.findall(text) if n not in known))


def entry_problems(name: str, entry: Any, tasks_dir: Path = TASKS_DIR) -> list[str]:
    """What is wrong with one catalog entry, each problem naming the entry and the field."""
    where = f"datasets.yaml entry '{name}'"
    if not isinstance(entry, dict):
        return [f"{where}: must be a mapping with keys {', '.join(ENTRY_KEYS)}"]
    problems = [f"{where}: missing field '{k}'" for k in FACT_KEYS if k not in entry]
    problems += [f"{where}: unknown field '{k}' (allowed: {', '.join(ENTRY_KEYS)})"
                 for k in entry if k not in ENTRY_KEYS]
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        problems.append(f"{where}: field 'aliases' must be a list of names")
    for key in ("size", "licence_or_terms"):
        if key in entry and (why := _text_problem(entry[key])):
            problems.append(f"{where}: field '{key}' {why}")
    source = entry.get("source")
    if "source" in entry and source != UNKNOWN and not (isinstance(source, str) and _URL.match(source)):
        problems.append(f"{where}: field 'source' must be an http(s) URL or 'unknown', got {source!r}")
    gated = entry.get("gated")
    if "gated" in entry and not isinstance(gated, bool) and gated != UNKNOWN:
        problems.append(f"{where}: field 'gated' must be true, false or 'unknown', got {gated!r}")
    standin = entry.get("standin")
    if "standin" in entry and standin is not False:
        m = _STANDIN.match(standin) if isinstance(standin, str) else None
        if not m:
            problems.append(f"{where}: field 'standin' must be false or start with "
                            f"tasks/<task id>/prepare.py, got {standin!r}")
        elif not (tasks_dir / m.group(1) / "prepare.py").is_file():
            problems.append(f"{where}: field 'standin' names {m.group(0)}, which does not exist")
        elif stale := unknown_kit_helpers(str(standin), tasks_dir / KIT_NAME):
            problems.append(f"{where}: field 'standin' names {', '.join('kit.' + n for n in stale)}"
                            f", which {tasks_dir.name}/{KIT_NAME} does not define: name a helper "
                            "the kit has (its docstring lists them) or drop the name")
    evidence = entry.get("evidence")
    if "evidence" in entry and (not isinstance(evidence, list) or not evidence
                                or not all(isinstance(u, str) and _URL.match(u) for u in evidence)):
        problems.append(f"{where}: field 'evidence' must be a non-empty list of http(s) URLs")
    second_read = entry.get("second_read")
    if "second_read" in entry and second_read not in SECOND_READ_VALUES:
        problems.append(f"{where}: field 'second_read' must be one of {', '.join(SECOND_READ_VALUES)} "
                        f"(or left out while the entry is unread), got {second_read!r}")
    return problems


def build_index(catalog: Any, tasks_dir: Path = TASKS_DIR) -> dict[str, str]:
    """Validate a parsed catalog; return every accepted name (entry names and aliases) -> entry
    name. Raises CatalogError listing each problem."""
    if not isinstance(catalog, dict) or not catalog:
        raise CatalogError("datasets.yaml must map dataset names to entries; fix the file's shape")
    problems: list[str] = []
    index: dict[str, str] = {}
    for name, entry in catalog.items():
        problems += entry_problems(str(name), entry, tasks_dir)
        aliases = entry.get("aliases", []) if isinstance(entry, dict) else []
        for spelling in [str(name)] + (aliases if isinstance(aliases, list) else []):
            if not isinstance(spelling, str):
                continue
            if (owner := index.get(spelling)) is not None and owner != name:
                problems.append(f"datasets.yaml: '{spelling}' is claimed by both '{owner}' and "
                                f"'{name}'; keep it under one entry")
            index[spelling] = str(name)
    if problems:
        raise CatalogError("; ".join(problems))
    return index


@lru_cache(maxsize=4)
def load_catalog(path: Path = CATALOG_PATH) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The validated catalog (entry name -> entry) and its name index (spelling -> entry name)."""
    try:
        catalog = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"cannot read the dataset catalog {path}: {exc}") from exc
    return catalog, build_index(catalog)


def catalog_read_summary(path: Path = CATALOG_PATH) -> dict[str, Any]:
    """How far the catalog's second read got: entries, read (those with `second_read`), ok,
    corrected, unverifiable, and share_corrected (corrected / read, 0.0 before any read)."""
    catalog, _ = load_catalog(path)
    outcomes = [e["second_read"] for e in catalog.values() if "second_read" in e]
    counts = {v: outcomes.count(v) for v in SECOND_READ_VALUES}
    share = round(counts["corrected"] / len(outcomes), 3) if outcomes else 0.0
    return {"entries": len(catalog), "read": len(outcomes), **counts, "share_corrected": share}


def resolve(record_id: str, names: list[str], index: dict[str, str]) -> list[str]:
    """Each of a record's dataset names -> its catalog entry name; an unknown name is an error."""
    missing = [n for n in names if n not in index]
    if missing:
        raise CatalogError(
            f"record {record_id}: dataset name(s) {missing} are not in corpus/datasets.yaml; add an "
            f"entry for each, or add the name to an existing entry's aliases")
    return [index[n] for n in names]


def data_facts(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Per dataset the record names (curated.datasets, in order): `name` as the record spells it,
    `dataset` (the catalog entry it resolves to) and the entry's facts (size, source,
    licence_or_terms, gated, standin, evidence). Raises CatalogError for an unresolved name."""
    catalog, index = load_catalog()
    names = list((record.get("curated") or {}).get("datasets") or [])
    out = []
    for name, entry_name in zip(names, resolve(str(record.get("id")), names, index)):
        entry = catalog[entry_name]
        out.append({"name": name, "dataset": entry_name,
                    **{k: (list(entry[k]) if k == "evidence" else entry[k]) for k in FACT_KEYS}})
    return out


def param_problems(record_id: str, value: Any) -> list[str]:
    """What is wrong with one model-params.yaml entry, naming the record and the field."""
    where = f"model-params.yaml entry '{record_id}'"
    if not isinstance(value, dict):
        return [f"{where}: must be a mapping with keys {', '.join(PARAM_KEYS)}"]
    problems = [f"{where}: missing field '{k}'" for k in PARAM_KEYS if k not in value]
    allowed = PARAM_KEYS + PARAM_OPTIONAL
    problems += [f"{where}: unknown field '{k}' (allowed: {', '.join(allowed)})"
                 for k in value if k not in allowed]
    if "model" in value and _text_problem(value["model"], allow_unknown=False):
        problems.append(f"{where}: field 'model' must be one line naming the model")
    params = value.get("params")
    if "params" in value and not (isinstance(params, str) and _PARAMS.match(params)):
        problems.append(f"{where}: field 'params' must be a count like '11M', '1.5B' or '3450', "
                        f"got {params!r}")
    if "where" in value and not (isinstance(value["where"], str) and _WHERE.match(value["where"])):
        problems.append(f"{where}: field 'where' must be path:line, got {value['where']!r}")
    code = value.get("code")
    if "code" in value and (_text_problem(code, allow_unknown=False) or len(str(code)) > CODE_MAX):
        problems.append(f"{where}: field 'code' must be the stated line or the part of it that "
                        f"states the count (one line, at most {CODE_MAX} characters)")
    return problems


@lru_cache(maxsize=4)
def load_model_params(path: Path = MODEL_PARAMS_PATH) -> dict[str, dict[str, str]]:
    """The validated model-params.yaml: record id -> {params, where, code}."""
    try:
        data = parse_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise CatalogError(f"{path} must map record ids to {{params, where, code}}")
    problems = [p for rid, value in data.items() for p in param_problems(str(rid), value)]
    if problems:
        raise CatalogError("; ".join(problems))
    return data


def model_params(record_id: str) -> dict[str, str] | None:
    """The model's parameter count as the project's own pinned tree states it: {params, where,
    code} and `model` where given (where = path:line in that tree, code a substring of that line),
    or None where the tree does not state it."""
    entry = load_model_params().get(record_id)
    return dict(entry) if entry is not None else None
