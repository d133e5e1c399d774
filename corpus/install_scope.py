"""Install steps that serve another part of the repository, not the training command (issue 43).

A README installs what every part of a repository needs: a SLURM launcher's `pip install
submitit`, a serving worker's `pip install "sglang[all]"`, a Mixture-of-Experts entry's Tutel.
A `pip install` of named packages is dropped from a record's environment only on positive
evidence: each package it names is imported by another entry point of the repository (a script
with a `__main__` guard) or a file only such entry points load, and none of them by the files the
training entry loads (its import closure) or the scripts that prepare its data (named for data,
generation, download, conversion) and what they load. Installs of paths, requirement files, URLs, packages
nobody imports or only setup.py and docs import stay (nothing shows they are another part's).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from typing import Any

from gpu2tpu.corpus import gpu_deps, patterns

_PIP = re.compile(r"^(?:sudo\s+)?(?:python3?\s+-m\s+)?pip3?\s+install\s+(.*)$")
# pip names whose import name differs (lower case, '-' as '_' otherwise)
IMPORT_NAMES = {"opencv-python": "cv2", "opencv-python-headless": "cv2", "pyyaml": "yaml",
                "scikit-learn": "sklearn", "scikit-image": "skimage", "pillow": "PIL",
                "beautifulsoup4": "bs4", "tensorflow-gpu": "tensorflow", "protobuf": "google",
                "faiss-gpu": "faiss", "faiss-cpu": "faiss", "pytorch-lightning": "pytorch_lightning",
                "sentencepiece": "sentencepiece", "python-dateutil": "dateutil"}
_PREPARES = re.compile(r"(data|prep|gen|download|lmdb|create|make|build_dataset|convert)",
                       re.IGNORECASE)
_BUILDS = re.compile(r"(^|/)(setup\.py|conftest\.py)$|(^|/)docs?/")
_MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]", re.MULTILINE)
_WITH_VALUE = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c",
               "--constraint", "--target", "-t", "--prefix", "--global-option", "--config-settings"}


def named_packages(command: str) -> list[str] | None:
    """The import names a `pip install` of named packages installs; None for any other step (a
    path, `-r`, `-e`, a URL, or a step behind a `cd`)."""
    m = _PIP.match(command.strip())
    if not m:
        return None
    try:
        tokens = shlex.split(m[1], comments=True)
    except ValueError:
        return None
    names: list[str] = []
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok.startswith("-"):
            if tok in ("-r", "--requirement", "-e", "--editable"):
                return None
            skip = tok in _WITH_VALUE
            continue
        if tok.startswith(".") or any(c in tok for c in "/:@"):
            return None
        name = re.split(r"[\[<>=!~;]", tok)[0].lower()
        names.append(IMPORT_NAMES.get(name, name.replace("-", "_")))
    return names or None


def foreign_steps(install: list[dict[str, Any]], py_texts: dict[str, str],
                  roots: Iterable[str]) -> list[int]:
    """Indexes of install steps only other parts of the repository need (see the docstring)."""
    roots = [r for r in roots if r in py_texts]
    if not roots:
        return []
    prepares = [p for p in py_texts if _PREPARES.search(p) and not _BUILDS.search(p)]
    mine = _closure(py_texts, roots + prepares)
    entries = [p for p, t in py_texts.items() if p not in mine and _MAIN_GUARD.search(t)
               and not _BUILDS.search(p)]
    theirs = _closure(py_texts, entries) - mine  # other entry points and what only they load
    used = _imports(py_texts, mine)
    elsewhere = _imports(py_texts, theirs)
    out = []
    for i, step in enumerate(install):
        names = named_packages(str(step.get("command", "")))
        if names and all(n in elsewhere and n not in used for n in names):
            out.append(i)
    return out


def _closure(py_texts: dict[str, str], roots: list[str]) -> set[str]:
    return set(roots) | gpu_deps.analyse_paths(py_texts, [], roots)[1] if roots else set()


def _imports(py_texts: dict[str, str], files: set[str]) -> set[str]:
    return {m.split(".")[0] for p in files for m in patterns.imported_modules(py_texts[p])}
