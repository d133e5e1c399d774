"""Is a built dataset folder (the package's copy, corpus/data/) what the code builds now?

`differences(shipped, built)` compares a folder with a fresh `gpu2tpu corpus build --out TMP`:
the revision reports stamp, each split's rows (one per task folder, one per record) and columns,
the kit helpers rows name, and the card and side files. Sizes the parquet writer decides (the
card's byte counts) are not compared: they change with the pyarrow version, the content does not.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from gpu2tpu.corpus import DATA_DIR
from gpu2tpu.corpus.build import revision_of, split_content
from gpu2tpu.corpus.data_facts import unknown_kit_helpers
from gpu2tpu.tasks import TASK_KIT

REBUILD = "gpu2tpu corpus build"  # writes the package's copy (corpus/data/) from the code
SIDE_FILES = ("README.md", "considered.tsv", "difficulty.svg")
ID_COLUMNS = ("id", "task_id")  # the row id of `projects`, of `tasks`
_SIZES = re.compile(r"^(\s*(?:num_bytes|download_size|dataset_size):) \d+$", re.M)
_SHOWN = 8  # ids named in one message


def split_files(data_dir: Path) -> list[str]:
    """The parquet files of a built folder, relative, in path order (as the revision takes them)."""
    return sorted(p.relative_to(data_dir).as_posix() for p in data_dir.glob("data/*.parquet"))


def stamped(data_dir: Path) -> str:
    """The revision a folder's REVISION file states (what reports stamp for the package's copy)."""
    path = data_dir / "REVISION"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else "unbuilt"


def content_revision(data_dir: Path) -> str:
    """The revision of the rows a folder holds, computed as `corpus build` computes it."""
    return revision_of([split_content(rel, pq.read_table(data_dir / rel))
                        for rel in split_files(data_dir)])


def _names(ids: list[str]) -> str:
    more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return ", ".join(ids[:_SHOWN]) + more


def _strings(value: Any) -> list[str]:
    """Every string inside a row's value (nested lists and structs included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _row_id(row: dict[str, Any]) -> str:
    return str(next((row[c] for c in ID_COLUMNS if c in row), "?"))


def _split_differences(rel: str, shipped: list[dict[str, Any]], shipped_cols: list[str],
                       built: list[dict[str, Any]], built_cols: list[str]) -> list[str]:
    out = []
    if gone := [c for c in shipped_cols if c not in built_cols]:
        out.append(f"{rel}: column(s) the code no longer builds: {', '.join(gone)}")
    if new := [c for c in built_cols if c not in shipped_cols]:
        out.append(f"{rel}: column(s) missing from the shipped copy: {', '.join(new)}")
    have = {_row_id(r): r for r in shipped}
    want = {_row_id(r): r for r in built}
    if missing := sorted(set(want) - set(have)):
        out.append(f"{rel}: {len(missing)} row(s) missing from the shipped copy: {_names(missing)}")
    if extra := sorted(set(have) - set(want)):
        out.append(f"{rel}: {len(extra)} row(s) the code no longer builds: {_names(extra)}")
    common = [c for c in built_cols if c in shipped_cols]
    changed = {i: [c for c in common if have[i].get(c) != want[i].get(c)]
               for i in sorted(set(have) & set(want))}
    if changed := {i: cols for i, cols in changed.items() if cols}:
        cols = sorted({c for cs in changed.values() for c in cs})
        out.append(f"{rel}: {len(changed)} row(s) differ from what the code builds "
                   f"(column(s) {', '.join(cols)}): {_names(list(changed))}")
    return out


def kit_problems(data_dir: Path, kit: Path) -> list[str]:
    """Rows that name a kit helper (`kit.NAME`) the kit does not define, per split."""
    out = []
    for rel in split_files(data_dir):
        stale: dict[str, list[str]] = {}
        for row in pq.read_table(data_dir / rel).to_pylist():
            for name in unknown_kit_helpers("\n".join(_strings(row)), kit):
                stale.setdefault(f"kit.{name}", []).append(_row_id(row))
        out += [f"{rel}: {len(ids)} row(s) name {name}, which {kit.parent.name}/{kit.name} does "
                f"not define: {_names(ids)}" for name, ids in sorted(stale.items())]
    return out


def differences(shipped: Path, built: Path, kit: Path = TASK_KIT) -> list[str]:
    """How the folder `shipped` differs from the fresh build in `built`; empty when it is what
    the code builds. Each line names what differs and ends with the command that rebuilds it."""
    out_flag = "" if shipped.resolve() == DATA_DIR.resolve() else f" --out {shipped}"
    hint = f": rebuild it with `{REBUILD}{out_flag}`"
    if not (shipped / "README.md").is_file():
        return [f"{shipped}: no built dataset (README.md is missing){hint}"]
    out = []
    have, want = stamped(shipped), stamped(built)
    if have != want:
        out.append(f"REVISION: the shipped copy says {have} (reports stamp it), the code builds "
                   f"{want}")
    if (rows_say := content_revision(shipped)) != have:
        out.append(f"REVISION: {have} is not the revision of the rows the shipped copy holds "
                   f"({rows_say}): the files were edited by hand or written by other build code")
    shipped_files, built_files = split_files(shipped), split_files(built)
    for rel in sorted(set(shipped_files) | set(built_files)):
        if rel not in built_files:
            out.append(f"{rel}: a split the code no longer builds")
        elif rel not in shipped_files:
            out.append(f"{rel}: a split missing from the shipped copy")
        else:
            a, b = pq.read_table(shipped / rel), pq.read_table(built / rel)
            out += _split_differences(rel, a.to_pylist(), a.column_names, b.to_pylist(),
                                      b.column_names)
    out += kit_problems(shipped, kit)
    out += [f"{name}: differs from what the code builds" for name in SIDE_FILES
            if _side_text(shipped / name) != _side_text(built / name)]
    return [line + hint for line in out]


def _side_text(path: Path) -> str | None:
    """A side file's text with the byte counts the parquet writer decides left out."""
    return _SIZES.sub(r"\1 N", path.read_text(encoding="utf-8")) if path.is_file() else None
