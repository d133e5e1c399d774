"""The run directory and the report: where every file of a run lives, and report.json as a type.

One home for both (docs/formats.md describes them for users). evaluate writes them, regrade and
`gpu2tpu report` read them, the leaderboard verifies them: all through this module.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1  # report.json and summary.json
RUN_FILE_SCHEMA = 1  # process.json and goal.json (time_limit in process.json is optional in 1)
MANIFEST_SCHEMA = 1  # a reference bundle's or a kept suite's manifest.json
SCAN_SCHEMA = 1  # scan.json
SUMMARY = "summary.json"
REPORT = "report.json"
TRACE = "trace.jsonl"
PROCESS = "process.json"
GOAL = "goal.json"
PATCH = "patch.diff"
RUN_FILES = (TRACE, PROCESS, GOAL)  # what one probed run leaves (hashed)
EVALUATION_FILES = (*RUN_FILES, PATCH)  # what one evaluation leaves (hashed)
SCAN = "scan.json"  # the static scan of the patch, written before the run (hashed where present)
# what the kernel saw of a run, recorded from outside it (record/kernel_view.py); hashed where
# present, for candidates and references alike (runs recorded before it have none)
KERNEL = "kernel.json"
REFERENCES = "references"
GOLD = "gold"


class ReportError(Exception):
    """A run directory or report.json is malformed, incomplete or altered (message names the file)."""


def hash_file(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, data: object) -> None:
    """Write atomically: a crash leaves the old file or the new one, never half of one."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from `path`; ReportError when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ReportError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a JSON object")
    return data


def evaluation_name(agent: str, task_id: str, attempt: int) -> str:
    """`agent/task[.attempt]`: an evaluation's directory inside its run directory."""
    return f"{agent}/{task_id}" + (f".{attempt}" if attempt > 1 else "")


def seed_dir(seed: int) -> str:
    return f"seed-{seed}"


@dataclass(frozen=True)
class RunLayout:
    """`runs/<run_id>/`: summary.json, references/<id>/{seed-N,gold}/, <agent>/<task>[.n]/."""

    root: Path

    def __post_init__(self) -> None:
        # Absolute from the start: run paths are handed to processes in other working directories.
        object.__setattr__(self, "root", Path(os.path.abspath(Path(self.root).expanduser())))

    @classmethod
    def of_report(cls, report_path: Path) -> RunLayout:
        """The run a report.json belongs to (runs/<run_id>/<agent>/<task>/report.json)."""
        return cls(Path(os.path.abspath(Path(report_path).expanduser())).parent.parent.parent)

    @property
    def run_id(self) -> str:
        return self.root.name

    @property
    def summary(self) -> Path:
        return self.root / SUMMARY

    def evaluation(self, agent: str, task_id: str, attempt: int) -> Path:
        return self.root / evaluation_name(agent, task_id, attempt)

    def references(self, key: str) -> Path:
        return self.root / REFERENCES / key

    def inside(self, rel: str, base: Path | None = None) -> Path:
        """`rel` under `base` (default: the run), refusing absolute paths and escapes."""
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise ReportError(f"{rel!r} points outside the run directory {self.root}")
        path = (base or self.root) / rel
        real, root = path.resolve(), self.root.resolve()
        if real != root and root not in real.parents:
            raise ReportError(f"{rel!r} resolves outside the run directory {self.root}")
        return path

    def saved_reports(self) -> list[Path]:
        """Every evaluation's report.json below the run, whatever summary.json lists (a run
        directory reused by several runs holds more than the last one's summary lists)."""
        return sorted(p for p in self.root.rglob(REPORT) if REFERENCES not in p.relative_to(self.root).parts)

    def listed_reports(self) -> list[Path] | None:
        """The report.json files summary.json lists, in its order (None without a summary);
        ReportError when it is unreadable, lists none, or names a missing or outside file."""
        if not self.summary.is_file():
            return None
        listed = read_json(self.summary).get("evaluations")
        if not isinstance(listed, list) or not listed:
            raise ReportError(f"{self.summary} lists no evaluations")
        paths = []
        for rel in listed:
            path = self.inside(str(rel))
            if not path.is_file():
                raise ReportError(f"{self.summary} lists {rel}, which is missing")
            paths.append(path)
        return paths

    def listed(self, eval_dir: Path, name: str) -> Path:
        """A file named in report.json's `files`: references/... is relative to the run, the rest
        to the evaluation directory."""
        return self.inside(name) if name.startswith(REFERENCES + "/") else self.inside(name, eval_dir)


@dataclass
class Report:
    """report.json. Only `files` (the hashed evidence) and identity are trusted input to regrading;
    verdict and figures are always recomputed from the files."""

    run_id: str
    task_id: str
    task_hash: str
    agent: str
    attempt: int
    prediction_hash: str
    target: str
    created_at: str
    schema_version: int = SCHEMA_VERSION
    harness_version: str = ""
    corpus_revision: str = ""
    model: str | None = None
    cache_key: str | None = None
    prediction: dict[str, Any] = field(default_factory=dict)
    reference: dict[str, Any] | None = None  # {"id": key, "dir": "references/<key>"}
    runtime: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    candidate: dict[str, Any] = field(default_factory=dict)
    execution: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)

    REQUIRED = ("schema_version", "harness_version", "corpus_revision", "run_id", "task_id",
                "task_hash", "agent", "attempt", "prediction_hash", "target", "created_at",
                "verdict", "files")

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: Path | str = "report.json") -> Report:
        missing = [k for k in cls.REQUIRED if k not in data]
        if missing:
            raise ReportError(f"{source}: lacks {', '.join(missing)}; not a gpu2tpu report")
        if data["schema_version"] != SCHEMA_VERSION:
            raise ReportError(f"{source}: schema_version {data['schema_version']!r}; this gpu2tpu "
                              f"reads {SCHEMA_VERSION}. Upgrade gpu2tpu")
        if not isinstance(data["files"], dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in data["files"].items()):
            raise ReportError(f"{source}: `files` must map file names to sha256 strings")
        names = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in names})
        except TypeError as exc:
            raise ReportError(f"{source}: malformed report ({exc})") from exc

    @classmethod
    def load(cls, path: Path) -> Report:
        return cls.from_dict(read_json(path), path)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def write(self, path: Path) -> None:
        write_json(path, self.to_dict())

    @property
    def label(self) -> str:
        return evaluation_name(self.agent, self.task_id, self.attempt)

    @property
    def outcome(self) -> str:
        v = self.verdict
        return "migrated" if v.get("migrated") else str(v.get("category") or "failed")

    def verify_files(self, layout: RunLayout, eval_dir: Path) -> dict[str, str]:
        """Check every listed file against its hash; returns the verified hashes."""
        for name, expected in self.files.items():
            path = layout.listed(eval_dir, name)
            if not path.is_file():
                raise ReportError(f"{path}: missing (listed in report.json); the run is incomplete")
            if hash_file(path) != expected.lower():
                raise ReportError(f"{path}: contents differ from the sha256 recorded in report.json "
                                  "(file modified after evaluation); re-run `gpu2tpu evaluate`")
        if PROCESS not in self.files:
            raise ReportError(f"{eval_dir}: report.json lists no {PROCESS}: the evaluation did not "
                              "complete (an infra failure?); evaluate this prediction again")
        return dict(self.files)
