"""Static scanner: one repository at one commit -> one scan record. Never runs project code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gpu2tpu.corpus import (
    data_sources,
    difficulty,
    gpu_deps,
    model_size,
    patterns,
    reach,
    records,
    runnability,
    train_roots,
)
from gpu2tpu.corpus.source import Entry, RepoSource, open_source

SCANNER_VERSION = "2.10"
# 2.10: data sources read per sentence, under a heading naming the dataset, in a data file's URL
#       naming it, and from torchvision/torchaudio classes built with download=True.
# 2.8: counts are call sites whatever the receiver (the drop-path idiom counts again); a chain
#      through an attribute (`x.cpu().data.numpy()`) is one transfer.
# 2.7: a chain with arguments between its calls is one transfer; the drop-path idiom
#      `[x.item() for x in torch.linspace(...)]` is no sync.
# 2.6: a chain of host transfers (`.cpu().numpy()`) counts once; a file that starts with a
#      byte-order mark parses; text in triple-quoted strings is not code; an entry that does not
#      parse counts whole.
# 2.5: boolean-mask indexing read from the parsed code (a comprehension filter or a `mask_idx`
#      position array is no mask).
# 2.4: training_path_counts over reached functions (reach.py), trailing comments never counted,
#      glob-importing packages load every module.

PY_SUFFIXES = (".py",)
CUDA_SUFFIXES = (".cu", ".cuh")
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh")
CYTHON_SUFFIXES = (".pyx", ".pxd")
MAX_TEXT_BYTES = 2_000_000  # larger "Python" files are generated data, not code
MAX_LISTED = 20
SIZE_KEYS = ("files", "python_files", "python_lines", "notebooks", "cuda_files", "cpp_files",
             "cython_files")  # entry points listed per kind

_DEP_FILE = re.compile(
    r"(^|/)(requirements[\w\-\.]*\.txt|requirements/[\w\-\.]+\.txt|environment[\w\-\.]*\.ya?ml"
    r"|conda[\w\-\.]*\.ya?ml|setup\.py|setup\.cfg|pyproject\.toml|Pipfile|Dockerfile[\w\-\.]*)$",
    re.IGNORECASE,
)
_LICENCE_FILE = re.compile(r"^(licen[sc]e|copying)([\.\-_][\w\.\-]*)?$", re.IGNORECASE)
_TRAIN_NAME = re.compile(r"^(train|main|run|pretrain|finetune|fine_tune)\w*\.py$|^\w*_train\.py$")
_EVAL_NAME = re.compile(
    r"^(eval|evaluate|evaluation|test|inference|infer|validate|val|predict|demo|sample)\w*\.py$"
    r"|^\w*_(eval|test)\.py$"
)
_PIN = re.compile(r"^\s*([A-Za-z0-9][\w\.\-]*)(?:\[[^\]]*\])?\s*={2,3}\s*([\w\.\+\-\*!]+)")
_CONDA_PIN = re.compile(r"^\s*-\s*([A-Za-z0-9][\w\.\-]*)\s*={1,2}\s*([\w\.\+\-\*]+)")
_QUOTED_PIN = re.compile(r"""['"]([A-Za-z0-9][\w\.\-]*)(?:\[[^\]]*\])?\s*==\s*([\w\.\+\-]+)['"]""")
_REQ_NAME = re.compile(r"^\s*-?\s*([A-Za-z0-9][\w\.\-]*)")
_SKIP_DIRS = {"test", "tests", "unittest", "unittests", "docs", "doc", "config", "configs"}
TRAINING_PATH_KEYS = ("nonzero", "bool_mask_index", "unique", "masked_select", "item",
                      "host_transfer")
_TRAIN_HINTS = (".backward(", "Trainer(", ".fit(", "train(")  # with a __main__ guard


def _suffix(path: str) -> str:
    return PurePosixPath(path).suffix.lower()


def _is_dep_file(path: str) -> bool:
    return bool(_DEP_FILE.search(path)) and path.count("/") <= 2


def _licence_rank(path: str) -> tuple[int, int, str] | None:
    """Sort key for licence candidates: top-level files first, LICENSE before COPYING."""
    name = PurePosixPath(path).name
    if not _LICENCE_FILE.match(name) or path.count("/") > 1 or _suffix(name) in PY_SUFFIXES:
        return None
    return (path.count("/"), 0 if name.lower().startswith("licen") else 1, path)


def _decode(data: bytes) -> str:
    """UTF-8 text; a leading byte-order mark dropped (Python reads such a file; ast would not)."""
    return data.decode("utf-8-sig", errors="replace")


def _pins(path: str, text: str) -> list[tuple[str, str]]:
    """(name, version) pairs pinned with == (pip) or = (conda) in a dependency file."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(".txt"):
        return [(m.group(1), m.group(2)) for line in text.splitlines() if (m := _PIN.match(line))]
    if name.endswith((".yml", ".yaml")):
        out = []
        for line in text.splitlines():
            m = _CONDA_PIN.match(line) or _PIN.match(line.strip().lstrip("- "))
            if m:
                out.append((m.group(1), m.group(2).split("=")[0]))
        return out
    return _QUOTED_PIN.findall(text)


def _declared_names(path: str, text: str) -> set[str]:
    """Package names a dependency file mentions (for CUDA-only package detection)."""
    names: set[str] = set()
    if path.lower().endswith((".txt", ".yml", ".yaml")):
        for line in text.splitlines():
            line = line.split("#")[0]
            if "git+" in line or "/" in line:  # git+https://github.com/NVIDIA/apex
                names.add(line.rstrip("/").split("/")[-1].split("@")[0].split("#")[0]
                          .removesuffix(".git"))
            elif m := _REQ_NAME.match(line):
                names.add(m.group(1))
    else:
        names.update(n for n, _ in _QUOTED_PIN.findall(text))
        names.update(re.findall(r"""['"]([A-Za-z][\w\-]*)(?:[<>=!~]=?[\w\.]*)?['"]""", text))
    return names


def _repo_name(source: RepoSource, path: Path) -> str:
    """owner/name from the origin URL or from fetch's `<owner>+<name>` folder name."""
    if source.origin:
        m = re.search(r"github\.com[:/]+([\w\.\-]+)/([\w\.\-]+?)(?:\.git)?/?$", source.origin)
        if m:
            return f"{m.group(1)}/{m.group(2)}"
    for part in reversed(path.resolve().parts):
        if "+" in part:
            owner, name = part.split("+", 1)
            return f"{owner}/{name}"
    return path.resolve().name


def scan_source(source: RepoSource, repo: str, train_command: str | None = None,
                curated: dict[str, Any] | None = None, keep_sites: bool = False
                ) -> dict[str, Any]:
    """Scan an opened source; returns the record's `scan:` mapping.

    `train_command` (the record's curated command) names the training entry point whose import
    closure decides which CUDA-only code is a hard dependency; without it, the detected training
    scripts are used. `curated` (the record's curated facts: datasets, task, paper) feeds the
    CPU runnability estimate, and its site corrections (records.SITE_CORRECTIONS) are applied to
    the evidence before the tier is derived (records.CorrectionError when one no longer fits).
    `keep_sites` adds `training_path_sites`: each counted hazard's file, line and code (shown by
    `corpus scan --sites`, never written to a record).
    """
    entries = source.entries()
    size = dict.fromkeys(SIZE_KEYS, 0)
    size["files"] = len(entries)
    counts = dict.fromkeys(patterns.CONSTRUCTS, 0)
    frameworks = dict.fromkeys(patterns.FRAMEWORKS, 0)
    deps: set[str] = set()
    declared: set[str] = set()
    all_declared: set[str] = set()
    all_imported: set[str] = set()
    py_texts: dict[str, str] = {}
    py_codes: dict[str, str] = {}  # the same files without comments (patterns.without_comments)
    shell_texts: dict[str, str] = {}
    train: list[str] = []
    evals: list[str] = []
    absent = {e.path for e in entries if e.size < 0}  # blobs the snapshot does not hold
    unread = 0

    to_read: list[Entry] = []
    for e in entries:
        suffix = _suffix(e.path)
        size["python_files"] += suffix in PY_SUFFIXES
        size["notebooks"] += suffix == ".ipynb"
        size["cuda_files"] += suffix in CUDA_SUFFIXES
        size["cpp_files"] += suffix in CPP_SUFFIXES
        size["cython_files"] += suffix in CYTHON_SUFFIXES
        if ((suffix in PY_SUFFIXES and e.size <= MAX_TEXT_BYTES) or _is_dep_file(e.path)
                or (suffix in (".sh", ".yaml", ".yml") and 0 <= e.size <= 200_000)):
            to_read.append(e)
    ranked = sorted((rank, e) for e in entries if (rank := _licence_rank(e.path)))
    licence_files = [e for _rank, e in ranked[:5]]
    to_read.extend(licence_files)

    dep_files: list[str] = []
    pinned: dict[str, str] = {}
    licence: dict[str, Any] = {"spdx": None, "permissive": False, "file": None}
    for entry, data in source.read_many(to_read):
        if data is None:  # a file the scan needed is not in the snapshot
            absent.add(entry.path)
            unread += 1
            continue
        text = _decode(data)
        path = entry.path
        if entry in licence_files:
            spdx, permissive = patterns.detect_licence(text)
            # the first licence file wins, unless it is unrecognised and a later one is known
            if licence["spdx"] in (None, "LicenseRef-unknown") and (
                    licence["spdx"] is None or spdx != "LicenseRef-unknown"):
                licence = {"spdx": spdx, "permissive": permissive, "file": path}
        if _is_dep_file(path):
            dep_files.append(path)
            for name, version in _pins(path, text):
                pinned.setdefault(name.lower().replace("_", "-"), version)
            names = _declared_names(path, text)
            all_declared.update(names)
            declared.update(d for n in names if (d := patterns.cuda_deps_of_name(n)))
        if _suffix(path) in (".sh", ".yaml", ".yml"):
            shell_texts[path] = text
        if _suffix(path) not in PY_SUFFIXES:
            continue
        py_texts[path] = text
        size["python_lines"] += text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        code = py_codes[path] = patterns.without_comments(text)
        patterns.count_constructs(code, counts)
        mods = patterns.imported_modules(code)
        all_imported.update(m.split(".")[0] for m in mods)
        for fw in patterns.frameworks_of(mods):
            frameworks[fw] += 1
        deps.update(d for m in mods if (d := patterns.cuda_deps_of_name(m)))
        kind = _entry_kind(path, code)
        if kind == "train":
            train.append(path)
        elif kind == "eval":
            evals.append(path)

    deps |= declared
    by_suffix = gpu_deps.Resolver(py_texts).by_suffix
    found = train_roots.training_roots(train_command, set(py_texts), shell_texts, by_suffix,
                                       py_texts)
    roots = found.scripts
    # a config value that names a module file (`arch: arch_2dpass`): code may import it by name
    for word in found.config_words:
        for file in by_suffix.get(word, []):
            if file.endswith(".py") and not file.endswith("__init__.py"):
                found.config_modules.append(file.removesuffix(".py").replace("/", "."))
    evidence, on_path = gpu_deps.analyse_paths(py_texts, declared, roots or _rank(train),
                                               found.config_modules)
    # audited corrections (curated.site_corrections) survive every rescan
    evidence = records.apply_site_corrections(
        evidence, (curated or {}).get(records.SITE_CORRECTIONS), repo, {**py_texts, **shell_texts})
    command = train_command or (curated or {}).get("train_command")
    words = _outside_words(command_words(command), found, shell_texts)
    sites = path_sites(py_texts, py_codes, on_path, roots or _rank(train), words)
    scan: dict[str, Any] = {
        "scanner_version": SCANNER_VERSION,
        "repo": repo,
        "commit": source.commit,
        "commit_date": source.commit_date,
        "licence": licence,
        "size": size,
        "dependencies": {"files": sorted(dep_files),
                         "pinned": dict(sorted(pinned.items()))},
        "frameworks": frameworks,
        "cuda_only_deps": sorted(deps),
        "cuda_only": {"training_roots": roots or _rank(train),
                      "roots_from": "train_command" if roots else "detected",
                      "config_files": found.config_files[:MAX_LISTED],
                      "hard": gpu_deps.hard_names(evidence), "evidence": evidence},
        "entry_points": {"train": _rank(train), "eval": _rank(evals)},
        "counts": counts,
        "training_path_counts": sites.counts(),  # hazards in the code the training entry reaches
        "training_path_reach": sites.facts(),
        "missing_blobs": len(absent),  # files absent from the snapshot (>= 4 MiB in fetch's)
        "missing_scanned_blobs": unread,  # of which Python/dependency/licence files
    }
    scan.update(difficulty.derive(scan))
    model_texts = _model_texts(source, entries, {**shell_texts, **py_texts})
    from_repo = model_size.read_model_size(model_texts, command, on_path | set(roots),
                                           found.config_files)
    datasets = [str(x) for x in (curated or {}).get("datasets") or []]
    stated = data_sources.stated_sources(
        datasets, data_sources.catalog_spellings(datasets),
        _read_more(source, entries, data_sources.files_to_read((e.path, e.size) for e in entries),
                   model_texts), repo) if datasets else {}
    scan["runnability"] = runnability.assess(curated or {}, scan, sorted(all_declared),
                                             sorted(all_imported), from_repo, stated)
    if keep_sites:
        scan["training_path_sites"] = sites.sites
    return scan


def command_words(command: str | None) -> list[str]:
    """The identifiers a training command names (an --arch value may pick a function)."""
    return reach.WORD.findall(command or "")


def _outside_words(words: list[str], found: train_roots.Roots, shell_texts: dict[str, str]
                   ) -> list[str]:
    """Names the command and its configuration may choose code by; without configuration
    files of the command, every YAML file's words (over-approximate: a default config)."""
    out = words + found.config_words + [w for m in found.config_modules for w in m.split(".")]
    configs = found.config_files or [p for p in shell_texts if p.endswith((".yaml", ".yml"))]
    for path in configs:
        out += reach.WORD.findall(shell_texts.get(path, ""))
    return out


@dataclass
class PathSites:
    """Each hazard the training entry reaches: {construct, file, line, code}, and the reach."""
    sites: list[dict[str, Any]]
    files: int
    definitions: int
    reached: int
    unparsed: list[str]

    def counts(self) -> dict[str, int]:
        """Hazard counts over the code the training entry reaches (`training_path_counts`)."""
        out = dict.fromkeys(TRAINING_PATH_KEYS, 0)
        for site in self.sites:
            out[site["construct"]] += 1
        return out

    def facts(self) -> dict[str, Any]:
        """How the reach cut the path (`training_path_reach`)."""
        return {"files": self.files, "definitions": self.definitions, "reached": self.reached,
                "unparsed": self.unparsed[:MAX_LISTED]}


def path_sites(py_texts: dict[str, str], py_codes: dict[str, str], on_path: set[str],
               roots: list[str], words: list[str]) -> PathSites:
    """The sites behind `training_path_counts`: each construct found in a file on the path, on
    a line the reach keeps (a line of an unreached definition is blank in `found.texts`).
    `py_codes`: the same files as `py_texts` without comments, as the repository count read them."""
    # an entry that does not parse is still on its own path (read whole, reach.py)
    texts = {f: py_texts[f] for f in sorted(on_path | set(roots)) if f in py_texts}
    found = reach.reached_texts(texts, roots or texts, words)  # no entry known: each file is one
    out: list[dict[str, Any]] = []
    for file, kept in found.texts.items():
        lines = kept.split("\n")
        for construct, line in patterns.construct_sites(py_codes[file], TRAINING_PATH_KEYS):
            if line <= len(lines) and lines[line - 1].strip():
                out.append({"construct": construct, "file": file, "line": line,
                            "code": lines[line - 1].strip()[:160]})
    return PathSites(out, len(found.texts), found.definitions, found.reached, found.unparsed)


def _model_texts(source: RepoSource, entries: list[Entry], texts: dict[str, str]
                 ) -> dict[str, str]:
    """The scanned texts plus READMEs and small JSON configs (absent blobs are skipped; they do
    not count as unread scan files)."""
    return _read_more(source, entries, model_size.files_to_read((e.path, e.size) for e in entries),
                      texts)


def _read_more(source: RepoSource, entries: list[Entry], paths: list[str], texts: dict[str, str]
               ) -> dict[str, str]:
    """`texts` plus the files of `paths` it does not hold yet (absent blobs skipped)."""
    wanted = set(paths) - set(texts)
    out = dict(texts)
    for entry, data in source.read_many(e for e in entries if e.path in wanted):
        if data is not None:
            out[entry.path] = _decode(data)
    return out


def _entry_kind(path: str, code: str) -> str | None:
    parts = PurePosixPath(path).parts
    if any(p.lower() in _SKIP_DIRS for p in parts[:-1]):
        return None
    name = parts[-1]
    if _TRAIN_NAME.match(name):
        return "train"
    trains = patterns.MAIN_GUARD.search(code) and ".backward(" in code and ".step(" in code
    if _EVAL_NAME.match(name) and not name.startswith("test_") and not trains:
        return "eval"  # `*_test.py` that runs its own optimizer loop is a training script
    if patterns.MAIN_GUARD.search(code) and any(h in code for h in _TRAIN_HINTS):
        return "train"
    return None


def _rank(paths: list[str]) -> list[str]:
    """Shallow paths first, then by name; at most MAX_LISTED."""
    return sorted(paths, key=lambda p: (p.count("/"), p))[:MAX_LISTED]


def scan_path(path: Path, commit: str | None = None, repo: str | None = None,
              train_command: str | None = None, curated: dict[str, Any] | None = None,
              keep_sites: bool = False) -> dict[str, Any]:
    """Scan a checkout or git directory at `commit` (default HEAD for git, the files otherwise)."""
    source = open_source(path, commit)
    try:
        return scan_source(source, repo or _repo_name(source, path), train_command, curated,
                           keep_sites)
    finally:
        source.close()
