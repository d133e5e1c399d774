"""The scripts and configuration files a record's training command starts.

The curated command (`python train.py ...`, `cd src && python main.py ...`, `bash run.sh`,
`python -m pkg.main`, `torchrun ... train.py --config=cfg.yaml`, hydra `experiment=x/y`) is read
statically: shell scripts it runs are read one level deep, and configuration files it names are
searched for dotted module names (`type: projects.nerf.model`) that code loads by name.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

_SKIP_MODULES = ("torch.distributed.launch", "torch.distributed.run")
_YAML_PATH = re.compile(r"[\w\-\./+]+\.ya?ml\b")
_DOTTED_VALUE = re.compile(r"[:=\s'\"]([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,})\b")
_BARE_VALUE = re.compile(r"^\s*[\w\-]+\s*:\s*['\"]?([A-Za-z_]\w{2,})['\"]?\s*$", re.MULTILINE)
_HYDRA_OVERRIDE = re.compile(r"^\+?([\w/]+)=([\w\-/\.]+)$")
MAX_CONFIG_FILES = 40
_HYDRA_MAIN = re.compile(r"@hydra\.main\(([^)]*)\)")
_HYDRA_ARG = re.compile(r"""(config_path|config_name)\s*=\s*['"]([^'"]*)['"]""")


@dataclass
class Roots:
    """Training scripts (repository paths) and module names their configuration loads."""

    scripts: list[str] = field(default_factory=list)
    config_files: list[str] = field(default_factory=list)
    config_modules: list[str] = field(default_factory=list)
    config_words: list[str] = field(default_factory=list)  # bare values: maybe module names


def norm(p: PurePosixPath) -> str:
    """A repository-relative path with `.` and `..` folded ("" for the root)."""
    parts: list[str] = []
    for part in p.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part not in (".", "", "/"):
            parts.append(part)
    return "/".join(parts)


def _find(name: str, cwd: PurePosixPath, paths: set[str], base: PurePosixPath | None = None
          ) -> str:
    """`name` relative to cwd, else to `base`, else to the root, else the one file so named."""
    name = re.sub(r"^\$\{?\w+\}?/", "", name)  # $CURDIR/main.py
    for folder in (cwd, base, PurePosixPath(".")):
        if folder is not None and (cand := norm(folder / name)) in paths:
            return cand
    tail = "/" + norm(PurePosixPath(name))
    matches = [p for p in paths if ("/" + p).endswith(tail)]
    return matches[0] if len(matches) == 1 else ""


def training_roots(command: str | None, py_paths: set[str], texts: dict[str, str],
                   module_files: dict[str, list[str]],
                   py_texts: dict[str, str] | None = None) -> Roots:
    """Resolve a training command against the repository.

    `texts`: path -> text of shell and YAML files; `module_files`: dotted module suffix -> files
    (as `gpu_deps.Resolver.by_suffix`); `py_texts`: the Python sources, where a script's
    `@hydra.main(config_path=..., config_name=...)` names the configuration it always loads.
    """
    out = Roots()
    if not command:
        return out
    _walk(command, PurePosixPath("."), None, py_paths, texts, module_files, out, depth=0)
    for script in out.scripts:
        for found in _hydra_configs(script, (py_texts or {}).get(script, ""), texts):
            _add(out.config_files, found)
    _read_configs(out, texts)
    return out


def _hydra_configs(script: str, code: str, texts: dict[str, str]) -> list[str]:
    """The configuration files a script's `@hydra.main` loads: config_path (a file, or a folder
    with config_name in it, `config` by default), relative to the script."""
    out = []
    here = PurePosixPath(script).parent
    for m in _HYDRA_MAIN.finditer(code):
        args = dict(_HYDRA_ARG.findall(m.group(1)))
        path, name = args.get("config_path", ""), args.get("config_name", "")
        if not path and not name:
            continue
        if not name and path.endswith((".yaml", ".yml")):
            cands = [norm(here / path)]
        else:
            stem = name if name.endswith((".yaml", ".yml")) else f"{name or 'config'}.yaml"
            cands = [norm(here / path / stem)]
        out += [c for c in cands if c in texts]
    return out


def _walk(command: str, cwd: PurePosixPath, base: PurePosixPath | None, py_paths: set[str],
          texts: dict[str, str], module_files: dict[str, list[str]], out: Roots,
          depth: int) -> PurePosixPath:
    for line in command.splitlines():
        for part in re.split(r"&&|;|\|\||\|", line):
            try:
                tokens = shlex.split(part, comments=True)
            except ValueError:
                tokens = part.split()
            if len(tokens) >= 2 and tokens[0] == "cd":
                cwd = PurePosixPath(norm(cwd / tokens[1]) or ".")
                continue
            for i, tok in enumerate(tokens):
                value = tok.split("=", 1)[1] if tok.startswith("-") and "=" in tok else tok
                if value.endswith(".sh") and depth == 0:
                    script = _find(value, cwd, set(texts), base)
                    if script:
                        _walk(texts[script], cwd, PurePosixPath(script).parent, py_paths, texts,
                              module_files, out, depth + 1)
                elif value.endswith(".py"):
                    _add(out.scripts, _find(value, cwd, py_paths, base))
                elif tok == "-m" and i + 1 < len(tokens) and tokens[i + 1] not in _SKIP_MODULES:
                    mod = tokens[i + 1]
                    hits = module_files.get(mod, []) + module_files.get(f"{mod}.__main__", [])
                    if hits:
                        _add(out.scripts, sorted(hits, key=lambda p: p.count("/"))[0])
                elif _YAML_PATH.fullmatch(value):
                    found = _find(value, cwd, set(texts), base)
                    _add(out.config_files, found)
                    if not found:  # a config the user writes: its folder holds the templates
                        folder = norm(cwd / PurePosixPath(value).parent)
                        for t in sorted(texts):
                            if t.endswith((".yaml", ".yml")) and norm(
                                    PurePosixPath(t).parent) == folder:
                                _add(out.config_files, t)
                elif m := _HYDRA_OVERRIDE.match(tok):  # hydra: experiment=hg38/hg38_hyena
                    _add(out.config_files, _find(f"{m.group(1)}/{m.group(2)}.yaml", cwd,
                                                 set(texts), base))
    return cwd


def _add(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


def _read_configs(out: Roots, texts: dict[str, str]) -> None:
    """Follow YAML files named by YAML files; collect dotted names that may be modules."""
    i = 0
    while i < len(out.config_files) and len(out.config_files) < MAX_CONFIG_FILES:
        path = out.config_files[i]
        i += 1
        text = texts.get(path, "")
        here = PurePosixPath(path).parent
        for ref in _YAML_PATH.findall(text):
            _add(out.config_files, _find(ref, PurePosixPath("."), set(texts), here))
        for name in _DOTTED_VALUE.findall(text):
            if not re.fullmatch(r"[\d\.]+|\w+\.ya?ml", name):
                _add(out.config_modules, name)
        for word in _BARE_VALUE.findall(text):  # `model_architecture: arch_2dpass`
            if word.lower() not in ("true", "false", "null", "none"):
                _add(out.config_words, word)
