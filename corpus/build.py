"""`gpu2tpu corpus build`: records + task dirs -> a Hugging Face dataset folder; deterministic."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features

from gpu2tpu.corpus import DATA_DIR, card
from gpu2tpu.corpus.check import SPLITS, run_check
from gpu2tpu.corpus.records import (
    CURATION_DIR,
    PROJECTS_DIR,
    Considered,
    load_considered,
    load_records,
)
from gpu2tpu.corpus.schema import CONFIG_FEATURES, project_row, task_row
from gpu2tpu.errors import UserError
from gpu2tpu.tasks import TASKS_DIR
from gpu2tpu.tasks.spec import load_spec  # the one task.yaml reader

TASK_SPLITS = ("practice", "upstream")  # by the task's kind


class BuildError(Exception):
    """The inputs are not fit to build from (message says which and what to run)."""


@dataclass
class BuildResult:
    out_dir: Path
    revision: str
    counts: dict[str, int] = field(default_factory=dict)  # "projects/main" -> rows
    problems: list[str] = field(default_factory=list)


def split_content(name: str, table: pa.Table) -> bytes:
    """What the revision hashes of one split: its path and its rows as canonical JSON (as a
    reader gets them back), so the revision names the content, not the bytes one pyarrow
    version writes (created_by, encodings, compression)."""
    rows = json.dumps(table.to_pylist(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{name}\n{rows}\n".encode()


def revision_of(parts: list[bytes]) -> str:
    """The revision of a built dataset from its splits' `split_content`, in path order."""
    return hashlib.sha256(b"".join(parts)).hexdigest()[:12] if parts else "empty"


def _write_parquet(rows: list[dict[str, Any]], features: Features,
                   path: Path, rel: str) -> tuple[bytes, int, bytes]:
    """Write rows with the features' schema (datasets metadata embedded); returns the file's
    bytes, the size in memory of the table read back from them (Arrow bytes, as a user loads it:
    the card's `num_bytes`) and the split's `split_content`."""
    table = pa.Table.from_pylist(rows, schema=features.arrow_schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=9, store_schema=True)
    data = sink.getvalue()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    back = pq.read_table(io.BytesIO(data))
    return data, back.nbytes, split_content(rel, back)


def load_tasks(tasks_dir: Path) -> list[dict[str, Any]]:
    """Rows of the `tasks` config, one per task folder (`<tasks_dir>/<task_id>/task.yaml`, the
    folders the task finder lists), sorted by folder."""

    rows = []
    for spec_path in sorted(tasks_dir.glob("*/task.yaml")) if tasks_dir.is_dir() else []:
        try:
            row = task_row(load_spec(spec_path.parent))
        except UserError as exc:  # already names the file
            raise BuildError(str(exc)) from exc
        except ValueError as exc:
            raise BuildError(f"{spec_path}: {exc}") from exc
        if row["task_id"] != spec_path.parent.name:
            raise BuildError(f"{spec_path}: task_id {row['task_id']!r} differs from its folder "
                             f"{spec_path.parent.name!r} (the finder lists tasks by folder): "
                             "rename the folder or fix task_id")
        rows.append(row)
    return rows


def _considered_tsv(curation_dir: Path) -> str:
    rows, _ = load_considered(curation_dir)
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(["repo", "decision", "reason", "detail", "log"])
    for r in sorted(rows, key=lambda r: (r.repo.lower(), r.log, r.line)):
        writer.writerow([r.repo, r.decision, r.reason, r.detail, r.log])
    return out.getvalue()


def build(out_dir: Path = DATA_DIR, projects_dir: Path = PROJECTS_DIR,
          curation_dir: Path = CURATION_DIR, tasks_dir: Path = TASKS_DIR,
          allow_invalid: bool = False) -> BuildResult:
    """Compile the dataset into `out_dir` (replaced as a whole)."""
    problems, _n = run_check(projects_dir, curation_dir)
    if problems and not allow_invalid:
        shown = "\n  ".join(problems[:10])
        raise BuildError(f"{len(problems)} problem(s) in the records; run `gpu2tpu corpus check` "
                         f"(or build with --allow-invalid):\n  {shown}")
    records = [r.data for r in load_records(projects_dir) if r.data is not None]
    rows = sorted((project_row(r) for r in records), key=lambda r: str(r["id"]))
    tasks = load_tasks(tasks_dir)
    considered, _ = load_considered(curation_dir)

    tmp = out_dir.with_name(out_dir.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        revision, counts = _write_all(tmp, rows, tasks, considered, curation_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    return BuildResult(out_dir, revision, counts, problems)


def _write_all(tmp: Path, rows: list[dict[str, Any]], tasks: list[dict[str, Any]],
               considered: list[Considered], curation_dir: Path) -> tuple[str, dict[str, int]]:
    """Write parquet, REVISION, considered.tsv, chart and card into `tmp`."""
    splits: dict[str, dict[str, str]] = {config: {} for config in CONFIG_FEATURES}
    sizes: dict[str, dict[str, card.SplitSize]] = {config: {} for config in CONFIG_FEATURES}
    contents: list[bytes] = []
    counts: dict[str, int] = {}
    plan = [("projects", s, [r for r in rows if r["split"] == s]) for s in SPLITS]
    plan += [("tasks", s, [t for t in tasks if t["kind"] == s]) for s in TASK_SPLITS]
    for config, split, split_rows in plan:
        counts[f"{config}/{split}"] = len(split_rows)
        if not split_rows:  # datasets cannot load a split with no rows: leave it out
            continue
        rel = f"data/{config}-{split}.parquet"
        data, num_bytes, content = _write_parquet(split_rows, CONFIG_FEATURES[config],
                                                  tmp / rel, rel)
        contents.append(content)
        splits[config][split] = rel
        sizes[config][split] = card.SplitSize(len(split_rows), num_bytes, len(data))
    revision = revision_of(contents)
    (tmp / "REVISION").write_text(revision + "\n", encoding="utf-8")
    (tmp / "considered.tsv").write_text(_considered_tsv(curation_dir), encoding="utf-8")
    card.write_chart(tmp, rows)
    text = card.render(splits, rows, tasks, considered, revision, sizes,
                       changelog(curation_dir, considered))
    (tmp / "README.md").write_text(text, encoding="utf-8")
    return revision, counts



# curation notes the changelog reads: corpus rebalances and other record changes, each named
# <kind>-<date>.md ("2026-12" a month, "2026-12-06" a day)
NOTE_GLOBS = ("rebalance-*.md", "changes-*.md")
_LIST_SPLIT = re.compile(r",\s*(?![^()]*\))")  # commas outside parentheses
_TIER_ROW = re.compile(r"^\|\s*([^|\s]+/[^|\s]+)\s*\|\s*(\d)\s*->\s*(\d)\s*\|")


def _names(line: str) -> list[str]:
    """`Out: a, b (tier 1, main)` -> ["a", "b (tier 1, main)"]."""
    rest = line.split(":", 1)[1].strip()
    return [n.strip() for n in _LIST_SPLIT.split(rest) if n.strip()]


def _why(repos: list[str], considered: list[Considered]) -> list[str]:
    """Why repositories left the corpus, from their rows in the considered logs: one line per
    (decision, reason, detail), naming the repositories it applies to."""
    groups: dict[str, list[str]] = {}
    for repo in repos:
        rows = [r for r in considered if r.repo.lower() == repo.lower()]
        row = next((r for r in rows if r.decision not in ("included", "reference_only")), None)
        back = next((r for r in rows if r.decision in ("included", "reference_only")), None)
        why = (f"{row.decision}, {row.reason}: {row.detail}" if row else
               f"restored later: now {back.decision} ({back.log}:{back.line})" if back else
               "no row in considered-*.tsv gives a reason")
        groups.setdefault(why.rstrip(": "), []).append(repo)
    return [f"Removed ({len(names)}; {why}): {', '.join(names)}"
            for why, names in groups.items()]


def curation_notes(curation_dir: Path) -> list[Path]:
    """The curation notes (NOTE_GLOBS), newest first by the date in the name ("2026-12" is the
    month, before "2026-12-05"; the same date: by name)."""
    if not curation_dir.is_dir():
        return []
    found = {p for pattern in NOTE_GLOBS for p in curation_dir.glob(pattern)}
    return sorted(found, reverse=True,
                  key=lambda p: ((p.stem.split("-", 1)[1] + "-00-00")[:10], p.name))


def changelog(curation_dir: Path, considered: list[Considered]) -> list[card.Change]:
    """What changed between revisions, newest first, from the curation logs: each curation note
    (`rebalance-*.md`, `changes-*.md`: its summary, tier moves, records out with the reason their
    considered row gives, records in), then former records that no note names (detail `was a
    record`)."""
    changes: list[card.Change] = []
    named: set[str] = set()
    for path in curation_notes(curation_dir):
        lines = path.read_text(encoding="utf-8").splitlines()
        title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), path.stem)
        first_section = next((i for i, ln in enumerate(lines) if ln.startswith("## ")),
                             len(lines))
        summary = [ln.strip() for ln in lines[:first_section]
                   if ln.strip() and not ln.startswith("# ")]
        moves = [m.group(2, 3) for ln in lines if (m := _TIER_ROW.match(ln.strip()))]
        outs = [n for ln in lines if ln.startswith("Out:") for n in _names(ln)]
        ins = [n for ln in lines if ln.startswith("In:") for n in _names(ln)]
        named.update(n.lower() for n in outs)
        items = list(summary)
        if moves:
            shown = ", ".join(f"{a} -> {b}: {n}" for (a, b), n in sorted(Counter(moves).items()))
            items.append(f"{len(moves)} record(s) changed tier ({shown}); the note lists each "
                         "with its evidence.")
        items += _why(outs, considered)
        if ins:
            items.append(f"Added ({len(ins)}): " + "; ".join(ins))
        date = path.stem.split("-", 1)[1]
        changes.append(card.Change(f"{date}: {title}", path.name, items))
    former = sorted({r.repo for r in considered if "was a record" in r.detail
                     and r.repo.lower() not in named}, key=str.lower)
    if former:
        changes.append(card.Change(
            "Former records no rebalance note names", "considered-*.tsv",
            _why(former, considered)))
    return changes
