"""Install steps a project's docs and Dockerfiles state, one line at a time (corpus/environment.py).

A step is kept runnable as written: with the `cd` before it (in its line, or in the doc block's
earlier `cd` lines), with the `git clone` that made the folder it runs in, whole up to
COMMAND_MAX characters. Steps are package installs (pip, conda, mamba, mim, apt), the environment
they go into (`conda activate`, a venv), builds (`setup.py build_ext`), submodule updates and the
repository's own setup scripts (`bash install_sc2.sh`, `sh ./make.sh`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

COMMAND_MAX = 400  # an install command is kept whole up to this (a clipped one does not run)
INSTALL = re.compile(r"^(?:sudo\s+)?(?:pip3?\s+install|python3?\s+-m\s+pip\s+install|conda\s+"
                     r"(?:install|create|env\s+create)|mamba\s+(?:install|create)|mim\s+install"
                     r"|apt(?:-get)?\s+(?:-\S+\s+)*install"  # system packages the project needs
                     r"|python3?\s+setup\.py\s+(?:install|develop|build_ext|build)"
                     r"|git\s+submodule\s+update"
                     # the environment later steps install into
                     r"|(?:conda|source)\s+activate|python3?\s+-m\s+venv|source\s+\S+/bin/activate"
                     # a setup script of the repository's (`bash install_sc2.sh`, `sh ./make.sh`)
                     r"|(?:bash\s+|sh\s+)?\.?/?[\w\-./]*(?:install|setup|make|compile|build)"
                     r"[\w\-.]*\.sh)\b")
_CD = re.compile(r"^cd\s+([\w\-./]+)\s*$")
# a doc block's `git clone URL [DIR]` line: an install step later run in DIR needs it first
_CLONE = re.compile(r"^git\s+clone\s+(?:-\S+\s+)*(?:\S*/)?([\w\-.]+?)(?:\.git)?/?"
                    r"(?:\s+([\w\-.]+))?$")
_INLINE_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_SHELL_COMMENT = re.compile(r"\s+#.*$")
_PROMPT = re.compile(r"^(?:[$>#]\s+|RUN\s+|!\s*|%\s*)", re.IGNORECASE)


@dataclass
class Block:
    """A doc's fenced block so far: the folder its `cd` lines entered (relative parts, [] the
    repository root) and the folders its `git clone` lines made (folder -> the clone line)."""
    cwd: list[str] = field(default_factory=list)
    clones: dict[str, str] = field(default_factory=dict)


def clip(line: str, limit: int) -> str:
    s = line.strip()
    return s if len(s) <= limit else s[:limit - 3] + "..."


def logical_lines(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """(first line number, line, its physical lines) with a shell continuation's arguments
    joined to the command they belong to (`apt-get install -y \\` then `    git wget`); a
    continuation line that starts a command of its own (`&& pip install ...`) stays its own."""
    lines = text.splitlines()
    n = 0
    while n < len(lines):
        first, line, physical = n + 1, lines[n], [lines[n]]
        while (line.endswith("\\") and n + 1 < len(lines) and lines[n + 1].strip()
               and not lines[n + 1].lstrip().startswith(("&&", "||", ";", "#"))):
            n += 1
            line = line[:-1].rstrip() + " " + lines[n].strip()
            physical.append(lines[n])
        yield first, line, physical
        n += 1


def steps_of(line: str) -> list[str]:
    """The `&&`-joined commands of a line, prompts and trailing shell comments removed."""
    return [_SHELL_COMMENT.sub("", part.strip(" \\"))  # "pip install .  # dev": the command only
            for part in _PROMPT.sub("", line.strip().strip("`").strip()).split("&&")]


def install_commands(kind: str, docker: bool, line: str, block: Block,
                     roots: frozenset[str] = frozenset()) -> Iterator[str]:
    """The install steps of one line of a `kind` file ("doc", "dep"; `docker` for a Dockerfile).
    `block` is the doc block's state, which a line that is only a `cd` or a `git clone` moves;
    `roots`: names of the clone itself (`git clone ... && cd <repo>` stays at the root)."""
    steps = steps_of(line)
    here, installs = list(block.cwd), 0
    for i, step in enumerate(steps):
        if m := _CD.match(step):
            here = moved(here, m[1], roots)
        elif (kind == "doc" or docker) and INSTALL.match(step):
            installs += 1
            cloned = [s for s in steps[:i] if s.startswith("git clone")]
            if cloned:  # `git clone X D && cd D && pip install .`: the chain is the step
                yield clip(" && ".join(steps[steps.index(cloned[0]):i + 1]), COMMAND_MAX)
                continue
            step = f"cd {'/'.join(here)} && {step}" if here else step
            made_by = block.clones.get(here[0]) if here else None
            yield clip(f"{made_by} && {step}" if made_by else step, COMMAND_MAX)
    if kind == "doc" and len(steps) == 1 and _CD.match(steps[0]):
        block.cwd[:] = here
    elif kind == "doc" and len(steps) == 1 and (c := _CLONE.match(steps[0])):
        if (folder := c[2] or c[1]).lower() not in roots:
            block.clones[folder] = steps[0]
    if not installs and kind == "doc":  # "run `conda env create -f env.yml` and ...": inline code
        for span in _INLINE_CODE.findall(line):
            if INSTALL.match(inline := _SHELL_COMMENT.sub("", _PROMPT.sub("", span.strip()))):
                yield clip(inline, COMMAND_MAX)


def moved(here: list[str], target: str, roots: frozenset[str]) -> list[str]:
    """The folder after `cd target` from `here` (relative parts; [] is the repository root)."""
    out = [""] if target.startswith("/") else list(here)  # "" first: an absolute path
    for part in target.strip("/").split("/"):
        if part == "..":
            out = out[:-1]
        elif part not in ("", ".") and not (not out and part.lower() in roots):
            out.append(part)
    return out
