"""Project records (`corpus/projects/<owner>__<name>.yaml`) and the curators' considered logs."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus import PACKAGE_DIR

PROJECTS_DIR = PACKAGE_DIR / "projects"
CURATION_DIR = PACKAGE_DIR / "curation"
CONSIDERED_COLUMNS = ("repo", "decision", "reason", "detail")

_TOP_KEY = re.compile(r"^[A-Za-z_][\w\-]*\s*:")


@dataclass
class Record:
    """One parsed record file (`data` is None when the YAML does not parse)."""

    path: Path
    data: dict[str, Any] | None
    error: str | None = None


def load_record(path: Path) -> Record:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return Record(path, None, f"does not parse: {str(exc).splitlines()[0]}")
    if not isinstance(data, dict):
        return Record(path, None, "is not a YAML mapping")
    return Record(path, data)


def record_paths(projects_dir: Path = PROJECTS_DIR) -> list[Path]:
    return sorted(projects_dir.glob("*.yaml")) if projects_dir.is_dir() else []


def load_records(projects_dir: Path = PROJECTS_DIR) -> list[Record]:
    return [load_record(p) for p in record_paths(projects_dir)]


def write_scan(path: Path, scan: dict[str, Any]) -> None:
    """Replace (or append) the top-level `scan:` block; every other line stays byte-identical."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    in_scan = False
    for line in lines:
        if _TOP_KEY.match(line):
            in_scan = line.startswith("scan:") or line.startswith("scan :")
        elif line.startswith("---") or line.startswith("..."):
            in_scan = False
        if not in_scan:
            kept.append(line)
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    block = yaml.safe_dump({"scan": scan}, sort_keys=False, allow_unicode=True, width=100)
    new = body + block
    if yaml.safe_load(new).get("scan") != scan:  # never write a file that reads back differently
        raise ValueError(f"{path}: scan block does not round-trip")
    path.write_text(new, encoding="utf-8")


@dataclass
class Considered:
    """One row of a considered log."""

    log: str  # file name, e.g. considered-A.tsv
    line: int
    repo: str
    decision: str
    reason: str
    detail: str


def load_considered(curation_dir: Path = CURATION_DIR) -> tuple[list[Considered], list[str]]:
    """All rows of `considered-*.tsv`, plus problems found while reading them."""
    rows: list[Considered] = []
    problems: list[str] = []
    for path in sorted(curation_dir.glob("considered-*.tsv")) if curation_dir.is_dir() else []:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None)
            if header is None or tuple(h.strip() for h in header[:4]) != CONSIDERED_COLUMNS:
                problems.append(f"{path.name}:1: header must be {' '.join(CONSIDERED_COLUMNS)}")
                continue
            for lineno, cells in enumerate(reader, start=2):
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) < 3:
                    problems.append(f"{path.name}:{lineno}: expected 4 tab-separated columns")
                    continue
                cells = [c.strip() for c in cells] + [""] * (4 - len(cells))
                rows.append(Considered(path.name, lineno, *cells[:4]))
    return rows, problems


def find_mirror(repo: str, mirror_root: Path) -> Path:
    """The folder `fetch` made for owner/name (`<owner>+<name>`), matched case-insensitively."""
    want = repo.replace("/", "+")
    exact = mirror_root / want
    if exact.is_dir():
        return exact
    if mirror_root.is_dir():
        for cand in mirror_root.iterdir():
            if cand.name.lower() == want.lower() and cand.is_dir():
                return cand
    raise FileNotFoundError(f"no snapshot of {repo} under {mirror_root} (fetch github:{repo})")
