"""The environment a project's own files state: Python, torch and CUDA versions, install commands.

Read statically from the pinned tree (never run): dependency files (requirements*.txt,
setup.py/setup.cfg/pyproject.toml, environment*/conda*.yml, Dockerfiles) and the install notes
(README*, INSTALL*, docs/*install*/getting_started*). Every item names its source as `where`
(`file:line`, as the scan's evidence) and quotes the line (`code`, at most CODE_MAX characters).

The record's field (ENVIRONMENT, written by `gpu2tpu corpus environment`) is the dict `extract`
returns, with the keys of ENV_KEYS:
  extractor_version  EXTRACTOR_VERSION; commit: the pinned commit the tree was read at
  tree               "snapshot" (<id>.tar.gz in the sources folder, each file checked against the
                     commit's tree before it is read) or "mirror" (a fetch mirror)
  python, torch, cuda  [{version, where, code}]: each distinct stated version (or specifier,
                     e.g. ">=1.6"; "==" dropped), first statement in path order, at most MAX_ITEMS
  install            [{command, where}]: install command lines (pip/conda/setup.py/mim)
  flags              [{stack, where, code}]: heavy or obsolete stacks (STACKS), first evidence
                     each, from the stated files and, for imports, the Python files
A record whose tree is not on this machine keeps NO environment field (absent means "not read");
a present field always means the tree was read at the record's commit.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from gpu2tpu.corpus.source import (
    DirSource,
    RepoSource,
    SourceError,
    find_git_dir,
    open_source,
)

ENVIRONMENT = "environment"  # the record's field
EXTRACTOR_VERSION = "3"  # 3: an install step keeps the `cd` before it; git submodule steps
ENV_KEYS = ("extractor_version", "commit", "tree", "python", "torch", "cuda", "install", "flags")
VERSION_KINDS = ("python", "torch", "cuda")
ITEM_KEYS = {"python": ("version", "where", "code"), "torch": ("version", "where", "code"),
             "cuda": ("version", "where", "code"), "install": ("command", "where"),
             "flags": ("stack", "where", "code")}
TREES = ("snapshot", "mirror")
STACKS = {  # flag -> why it matters for a migration
    "python2": "Python 2 stated",
    "torch<1.0": "a torch before 1.0 stated (0.x API)",
    "torch.utils.ffi": "torch 0.4 C extension FFI (removed in torch 1.0)",
    "tensorflow1": "TensorFlow 1.x (graph mode, Session)",
    "apex": "NVIDIA apex (CUDA extension build)",
    "mmcv-full": "mmcv-full (compiled CUDA ops)",
    "detectron2": "detectron2 (built from source with CUDA ops)",
}
MAX_ITEMS = 16
CODE_MAX = 160
_MAX_BYTES = 1_000_000

_DEP = re.compile(r"(^|/)(requirements[\w\-.]*\.(txt|in)|requirements/[\w\-.]+\.txt|setup\.py"
                  r"|setup\.cfg|pyproject\.toml|(environment|conda|env)[\w\-.]*\.ya?ml"
                  r"|Dockerfile[\w\-.]*|[\w\-.]*\.dockerfile)$", re.IGNORECASE)
# install notes at the top or one folder down (docs/, readme/ as CenterNet keeps INSTALL.md)
_DOC = re.compile(r"^(docs?/)?(readme|install|getting_started|get_started)[\w\-.]*$"
                  r"|^([\w\-.]+/)?[\w\-.]*(install|getting_started|get_started)[\w\-.]*"
                  r"\.(md|rst|txt)$", re.IGNORECASE)
_V = r"\d+(?:\.(?:\d+|x|\*))*"
_END = r"(?!\w|\.\w)"  # a version ends here: a full stop may follow ("Python 3.7."), "3.6.x" may not
_SPEC = rf"((?:[<>=!~]=?|≥)?\s*v?{_V}(?:\s*,\s*[<>=!]=?\s*{_V})*)"
_PY_REQUIRES = re.compile(r"""(?:python_requires|requires-python)\s*=\s*['"]([^'"]+)['"]""")
# setup files: poetry's `python = "^3.8"` / `torch = {version = "^2.0"}` and trove classifiers
_POETRY = re.compile(r"""^\s*(python|torch)\s*=\s*(?:\{\s*version\s*=\s*)?["']([^"']+)["']""")
_CLASSIFIER_PY = re.compile(r"Programming Language :: Python :: (\d\.\d+)\b")
_LINK = r"(?:\]\([^)\s]*\))?"  # "[PyTorch](https://pytorch.org/) 1.0": the link between name and version
_CONDA_PY = re.compile(rf"(?:^|[\s'\"])python\s*(={{1,2}}|>=|<=|>|<)\s*({_V})"
                       rf"(?:\s*,\s*(<=?|>=?|!=)\s*({_V}))?", re.IGNORECASE)  # ">=3.8, < 3.10"
_PROSE_PY = re.compile(rf"\b[Pp](?i:ython){_LINK}\s*(?i:version\s*)?(?:(>=|≥|==|=|>)\s*)?v?"
                       rf"([23]\.\d+(?:\.\d+)?)\+?{_END}|\bPython\s+([23]){_END}")
_DOCKER_PY = re.compile(r"^\s*FROM\s+(?:\S+/)?python:(\d+(?:\.\d+)*)", re.IGNORECASE)
_TORCH_PIN = re.compile(rf"(?:^|[\s'\"\[,(])(?:torch|pytorch)\s*{_SPEC}", re.IGNORECASE)
_PROSE_TORCH = re.compile(rf"\bpytorch{_LINK}\s*(?:version\s*)?(?:(>=|≥|==|=|>)\s*)?v?(\d\.\d+(?:\.\d+)?)"
                          rf"{_END}", re.IGNORECASE)
_DOCKER_TORCH = re.compile(r"^\s*FROM\s+pytorch/pytorch:(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_CUDA = [re.compile(p, re.IGNORECASE) for p in (
    rf"\b(?:cudatoolkit(?:-dev)?|cuda-toolkit|pytorch-cuda|cuda-version)\s*([=>]=?)\s*({_V})",
    r"^\s*FROM\s+nvidia/cuda:(\d+\.\d+(?:\.\d+)?)",
    r"^\s*FROM\s+pytorch/pytorch:[\w.]*-cuda(\d+\.\d+)",
    r"download\.pytorch\.org/whl/(?:torch_stable\.html.*\+)?cu(\d{2,3})\b",
    r"\+cu(\d{2,3})\b",
    r"\bcuda(?:[\s_-]*(?:toolkit|version))?[\s_-]*(>=|≥|==|=|v)?\s*(\d{1,2}\.(?:\d+|x)(?:\.\d+)?)"
    rf"{_END}",
)]
_INSTALL = re.compile(r"^(?:sudo\s+)?(?:pip3?\s+install|python3?\s+-m\s+pip\s+install|conda\s+"
                      r"(?:install|create|env\s+create)|mamba\s+(?:install|create)|mim\s+install"
                      r"|python3?\s+setup\.py\s+(?:install|develop|build_ext|build)"
                      r"|git\s+submodule\s+update)\b")
_FENCE = re.compile(r"^\s*```[\w+\-]*\s*$")  # a fenced block opens or closes (not ```cmd```)
_CD = re.compile(r"^cd\s+([\w\-./]+)\s*$")
_INLINE_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_SHELL_COMMENT = re.compile(r"\s+#(?:\s.*)?$")
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)")
_NEGATED = re.compile(r"\b(?:not|n't|no\s+longer|un)\s*(?:be\s+|yet\s+|officially\s+)?"
                      r"(?:supported|compatible|work)", re.IGNORECASE)
_PROMPT = re.compile(r"^(?:[$>#]\s+|RUN\s+|!\s*|%\s*)", re.IGNORECASE)
_TF1 = re.compile(r"\btensorflow(?:-gpu)?\s*(?:==|=|<=|~=)?\s*(1\.\d+(?:\.\d+)?)(?![\w.])"
                  r"|\btensorflow(?:-gpu)?\s*<\s*2\b|\bTensorFlow\s+1\.(?:x|\d+)", re.IGNORECASE)
_PY_FLAGS = (("torch.utils.ffi", re.compile(r"^\s*(?:from\s+torch\.utils\.ffi\s+import|"
                                             r"from\s+torch\.utils\s+import\s+ffi|"
                                             r"import\s+torch\.utils\.ffi)")),
             ("tensorflow1", re.compile(r"^\s*(?:from|import)\s+tensorflow\.contrib\b"
                                        r"|\btf\.(?:Session|placeholder|contrib)\b")),
             ("apex", re.compile(r"^\s*(?:from\s+apex(?:\.\w+)*\s+import|import\s+apex\b)")),
             ("detectron2", re.compile(r"^\s*(?:from|import)\s+detectron2\b")))
# TF1-only calls count only where `tf` is TensorFlow itself, not its TF2 `compat.v1` module
_PLAIN_TF = re.compile(r"^\s*import\s+tensorflow\s+as\s+tf\s*(?:#.*)?$", re.MULTILINE)
_DOC_FLAGS = (("apex", re.compile(r"github\.com/NVIDIA/apex(?:\.git)?(?![/\w])|^\s*-?\s*apex\s*"
                                  r"(?:[=<>~].*)?$|['\"]apex['\"<>=~]|install\s.*\bapex\b",
                                  re.IGNORECASE)),
              ("mmcv-full", re.compile(r"mmcv-full|mmcv_full", re.IGNORECASE)),
              ("detectron2", re.compile(r"detectron2", re.IGNORECASE)))


def _clip(line: str) -> str:
    s = line.strip()
    return s if len(s) <= CODE_MAX else s[:CODE_MAX - 3] + "..."


def _norm(op: str | None, ver: str) -> str:
    op = (op or "").replace("≥", ">=").strip()
    return ver if op in ("", "=", "==") else f"{op}{ver}"


def _is_comment(kind: str, line: str) -> bool:
    s = line.lstrip()
    return kind != "doc" and s.startswith("#")


def _line_items(kind: str, path: str, text: str, roots: frozenset[str] = frozenset()
                ) -> Iterator[tuple[str, str, int, str]]:
    """(field, value, line number, line) for each statement in one dependency or doc file."""
    name = PurePosixPath(path).name.lower()
    docker = kind == "dep" and ("dockerfile" in name)
    pydep = name in ("setup.py", "setup.cfg", "pyproject.toml")
    cwd: list[str] = []  # a doc's fenced block: the folders its `cd` lines entered
    in_block = False
    for n, line in enumerate(text.splitlines(), start=1):
        if kind == "doc" and _FENCE.match(line):
            cwd, in_block = [], not in_block
            continue
        if _is_comment(kind, line) or len(line) > 2000:
            continue
        yield from ((f, v, n, line) for f, v in _versions(kind, docker, pydep, line))
        if in_block and line.lstrip()[:1] == "#":
            continue  # in a doc's code block, `# pip install ...` is a comment, not a step
        yield from ((f, v, n, line)
                    for f, v in _commands_and_flags(kind, docker, line, cwd, roots))


def _denied(kind: str, line: str, m: re.Match[str]) -> bool:
    """Prose that names a version to rule it out ("PyTorch 0.4 is not supported") states none."""
    return kind == "doc" and bool(_NEGATED.search(_SENTENCE_END.split(line[m.end():], 1)[0]))


def _versions(kind: str, docker: bool, pydep: bool, line: str) -> Iterator[tuple[str, str]]:
    for field, value, m in _version_matches(kind, docker, pydep, line):
        if not _denied(kind, line, m):
            yield field, value


def _version_matches(kind: str, docker: bool, pydep: bool,
                     line: str) -> Iterator[tuple[str, str, re.Match[str]]]:
    poetry = _POETRY.match(line) if pydep else None
    if m := _PY_REQUIRES.search(line):
        yield "python", m[1].replace(" ", ""), m
    elif poetry and poetry[1] == "python":
        yield "python", poetry[2].replace(" ", ""), poetry
    elif pydep and (m := _CLASSIFIER_PY.search(line)):
        yield "python", m[1], m
    elif docker and (m := _DOCKER_PY.match(line)):
        yield "python", m[1], m
    elif (m := _CONDA_PY.search(line)) and (kind == "doc" or not pydep):
        yield "python", _norm(m[1], m[2]) + (f",{m[3]}{m[4]}" if m[3] else ""), m
    elif kind == "doc" and (m := _PROSE_PY.search(line)):
        yield "python", _norm(m[1], m[2]) if m[2] else m[3], m
    if docker and (m := _DOCKER_TORCH.match(line)):
        yield "torch", m[1], m
    elif poetry and poetry[1] == "torch":
        yield "torch", poetry[2].replace(" ", ""), poetry
    elif (m := _TORCH_PIN.search(line)) and re.search(r"\d", m[1]):
        yield "torch", _norm(*_split_spec(m[1])), m
    elif kind == "doc" and (m := _PROSE_TORCH.search(line)):
        yield "torch", _norm(m[1], m[2]), m
    for rx in _CUDA:
        if (m := rx.search(line)) and (kind == "doc" or rx is not _CUDA[-1] or docker):
            v = m[m.lastindex or 1].rstrip(".")
            v = f"{v[:-1]}.{v[-1]}" if rx in _CUDA[3:5] else v
            yield "cuda", (_norm(m[1], v) if rx in (_CUDA[0], _CUDA[-1]) else v), m
            break


def _commands_and_flags(kind: str, docker: bool, line: str, cwd: list[str],
                        roots: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """Install steps (with the `cd` before them, in the line or, in a doc, in its block) and stack
    flags of one line. `cwd`: the doc block's folder, which a line that is only a `cd` moves;
    `roots`: names of the clone itself (`git clone ... && cd <repo>` stays at the root)."""
    steps = [_SHELL_COMMENT.sub("", part.strip(" \\"))  # "pip install .  # dev": the command only
             for part in _PROMPT.sub("", line.strip().strip("`").strip()).split("&&")]
    cmd, here, installs = steps[0], list(cwd), 0
    for i, step in enumerate(steps):
        if m := _CD.match(step):
            here = _moved(here, m[1], roots)
        elif (kind == "doc" or docker) and _INSTALL.match(step):
            installs += 1
            cloned = [s for s in steps[:i] if s.startswith("git clone")]
            if cloned:  # `git clone X D && cd D && pip install .`: the chain is the step
                yield "install", _clip(" && ".join(steps[steps.index(cloned[0]):i + 1]))
            else:
                yield "install", _clip(f"cd {'/'.join(here)} && {step}" if here else step)
    if kind == "doc" and len(steps) == 1 and _CD.match(cmd):
        cwd[:] = here
    if not installs and kind == "doc":  # "run `conda env create -f env.yml` and ...": inline code
        for span in _INLINE_CODE.findall(line):
            if _INSTALL.match(inline := _SHELL_COMMENT.sub("", _PROMPT.sub("", span.strip()))):
                yield "install", _clip(inline)
    for stack, frx in _DOC_FLAGS:
        if frx.search(line) and (stack == "mmcv-full" or kind != "doc" or _INSTALL.match(cmd)
                                 or "git clone" in line or "detectron2.git" in line):
            yield "flags", stack
    if _TF1.search(line):
        yield "flags", "tensorflow1"


def _moved(here: list[str], target: str, roots: frozenset[str]) -> list[str]:
    """The folder after `cd target` from `here` (relative parts; [] is the repository root)."""
    out = [""] if target.startswith("/") else list(here)  # "" first: an absolute path
    for part in target.strip("/").split("/"):
        if part == "..":
            out = out[:-1]
        elif part not in ("", ".") and not (not out and part.lower() in roots):
            out.append(part)
    return out


def _split_spec(spec: str) -> tuple[str, str]:
    m = re.match(r"\s*([<>=!~]=?|≥)?\s*v?(.*)", spec)
    assert m is not None
    return m[1] or "", m[2].replace(" ", "")


def _is_python2(ver: str) -> bool:
    return bool(re.match(r"^(==|=|\^)?2(\.|$)", ver))


def _is_torch0(ver: str) -> bool:
    return bool(re.match(r"^(==|=|<=|~=|\^)?0\.", ver)) or ver in ("<1.0", "<1", "<1.0.0")


def extract(source: RepoSource, commit: str, tree: str, repo: str | None = None
            ) -> dict[str, Any]:
    """The environment dict (ENV_KEYS) the tree's own files state; see the module docstring."""
    entries = [e for e in source.entries() if 0 <= e.size <= _MAX_BYTES]
    kinds = {e.path: ("dep" if _DEP.search(e.path) and e.path.count("/") <= 2 else
                      "doc" if _DOC.match(e.path) else "py" if e.path.endswith(".py") else "")
             for e in entries}
    # dependency files first, then the docs, then Python code; top-level files first in each
    rank = {"dep": 0, "doc": 1, "py": 2}
    chosen = sorted((e for e in entries if kinds[e.path]),
                    key=lambda e: (rank[kinds[e.path]], e.path.count("/"), e.path))
    roots = frozenset({repo.rsplit("/", 1)[-1].lower()} if repo else ())  # `cd <clone>`
    found: dict[str, list[dict[str, str]]] = {k: [] for k in ITEM_KEYS}
    seen: dict[str, set[str]] = {k: set() for k in ITEM_KEYS}

    def add(field: str, value: str, where: str, line: str) -> None:
        if value in seen[field] or len(found[field]) >= MAX_ITEMS:
            return
        seen[field].add(value)
        if field == "install":
            found[field].append({"command": value, "where": where})
        else:
            key = "stack" if field == "flags" else "version"
            found[field].append({key: value, "where": where, "code": _clip(line)})

    for entry, data in source.read_many(chosen):
        if data is None:
            continue
        kind, text = kinds[entry.path], data.decode("utf-8", errors="replace")
        if kind == "py":
            plain_tf = _PLAIN_TF.search(text) is not None
            for n, line in enumerate(text.splitlines(), start=1):
                for stack, rx in _PY_FLAGS:
                    if stack not in seen["flags"] and (m := rx.search(line)) and (
                            plain_tf or not m[0].startswith("tf.")):
                        add("flags", stack, f"{entry.path}:{n}", line)
            continue
        for field, value, n, line in _line_items(kind, entry.path, text, roots):
            where = f"{entry.path}:{n}"
            add(field, value, where, line)
            if field == "python" and _is_python2(value):
                add("flags", "python2", where, line)
            if field == "torch" and _is_torch0(value):
                add("flags", "torch<1.0", where, line)
    found["flags"].sort(key=lambda f: list(STACKS).index(f["stack"]))
    return {"extractor_version": EXTRACTOR_VERSION, "commit": commit, "tree": tree,
            **{k: found[k] for k in ITEM_KEYS}}


def open_tree(record_id: str, repo: str, commit: str, sources: Path | None,
              mirror_root: Path | None) -> tuple[RepoSource, str] | None:
    """The record's pinned tree and its kind: the sources snapshot, verified file by file against
    the commit's tree (gpu2tpu.tasks.sources), else a fetch mirror read at the commit; None when
    neither is here. A snapshot that does not match its pin is refused (SourceError)."""
    mirror = _mirror_folder(repo, mirror_root)
    if sources is not None and (sources / f"{record_id}.tar.gz").is_file():
        return DirSource(verified_snapshot(record_id, repo, commit, sources, mirror)), "snapshot"
    if mirror is not None:
        return open_source(mirror, commit), "mirror"
    return None


def verified_snapshot(record_id: str, repo: str, commit: str, sources: Path,
                      mirror: Path | None) -> Path:
    """The snapshot's files, unpacked into the user cache once each is checked against the
    commit's root tree id (from the task that pins it, else from a mirror holding the commit)."""
    from gpu2tpu.tasks.sources import Pin, materialise_source
    from gpu2tpu.tasks.sources import SourceError as TreeMismatch

    archive = sources / f"{record_id}.tar.gz"
    if not (sources / f"{record_id}.tree.tsv").is_file():
        raise SourceError(f"{archive} has no {record_id}.tree.tsv beside it, so its files cannot "
                          "be checked against the pinned tree: add the listing or remove the "
                          "snapshot")
    tree = _pinned_tree(record_id, commit, mirror)
    if tree is None:
        raise SourceError(f"{archive}: no task pins commit {commit[:12]} and no mirror holds it, "
                          f"so the snapshot cannot be checked: fetch github:{repo} into the "
                          "mirror root (--mirror-root) and rerun")
    try:
        return materialise_source(Pin(record_id, repo, commit, tree), sources, needed_ok=("",))
    except TreeMismatch as exc:
        raise SourceError(f"{archive} refused: {exc}") from exc


def _pinned_tree(record_id: str, commit: str, mirror: Path | None) -> str | None:
    """The root tree id of `commit`: the upstream task's pin, else git's own in the mirror."""
    from gpu2tpu.errors import UserError
    from gpu2tpu.tasks.finder import find_task

    try:
        pin = find_task(record_id).source
    except UserError:
        pin = None
    if pin is not None and pin.commit == commit:
        return pin.tree
    git_dir = find_git_dir(mirror) if mirror is not None else None
    if git_dir is None:
        return None
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "--verify", "--quiet",
                           f"{commit}^{{tree}}"], capture_output=True, text=True, check=False,
                          env={**os.environ, "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0"})
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def _mirror_folder(repo: str, mirror_root: Path | None) -> Path | None:
    from gpu2tpu.corpus.records import find_mirror

    if mirror_root is None:
        return None
    try:
        return find_mirror(repo, mirror_root)
    except FileNotFoundError:
        return None


def environment_problems(value: Any, commit: Any) -> list[tuple[str, str]]:
    """(field, what) for each problem of a record's environment field (absent: none)."""
    f = ENVIRONMENT
    if value is None:
        return []
    todo = "rerun `gpu2tpu corpus environment --record FILE`"
    if not isinstance(value, dict):
        return [(f, f"must be a mapping with {', '.join(ENV_KEYS)}: {todo}")]
    out: list[tuple[str, str]] = []
    if sorted(value) != sorted(ENV_KEYS):
        out.append((f, f"keys must be exactly {', '.join(ENV_KEYS)}, found "
                       f"{', '.join(map(str, value))}: {todo}"))
    if value.get("commit") != commit:
        out.append((f"{f}.commit", f"{value.get('commit')!r} differs from the record's commit: "
                                   f"{todo}"))
    if value.get("tree") not in TREES:
        out.append((f"{f}.tree", f"must be one of {', '.join(TREES)}, found "
                                 f"{value.get('tree')!r}"))
    for key, item_keys in ITEM_KEYS.items():
        items = value.get(key)
        if not isinstance(items, list):
            out.append((f"{f}.{key}", f"must be a list of {{{', '.join(item_keys)}}}"))
            continue
        for i, item in enumerate(items):
            where = f"{f}.{key}[{i}]"
            if not isinstance(item, dict) or tuple(item) != item_keys or not all(
                    isinstance(v, str) and v for v in item.values()):
                out.append((where, f"must be {{{', '.join(item_keys)}}}, non-empty strings"))
            elif not re.match(r"^[^\s:]+:[1-9]\d*$", item["where"]):
                out.append((f"{where}.where", f"must be file:line, found {item['where']!r}"))
            elif key == "flags" and item["stack"] not in STACKS:
                out.append((f"{where}.stack", f"must be one of {', '.join(STACKS)}, found "
                                              f"{item['stack']!r}"))
    return out


def summary(env: dict[str, Any]) -> str:
    """One line: the first stated python, torch and CUDA versions and the flags."""
    first = {k: (env[k][0]["version"] if env[k] else "-") for k in VERSION_KINDS}
    flags = ",".join(f["stack"] for f in env["flags"]) or "-"
    return (f"python {first['python']} torch {first['torch']} cuda {first['cuda']} "
            f"install {len(env['install'])} flags {flags}")

