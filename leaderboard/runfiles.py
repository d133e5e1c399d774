"""Reading a run directory written by `gpu2tpu evaluate` (docs/formats.md) and checking it.

Nothing here trusts report.json's verdict: it only finds the reports, checks that every file they
list exists and matches its recorded sha256, and checks versions and metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.errors import UserError
from gpu2tpu.leaderboard.safetext import IDENTITY_FIELDS, UnsafeName, check_name
from gpu2tpu.record.calibration import CALIBRATION
from gpu2tpu.record.report import (
    EVALUATION_FILES,
    GOAL,
    KERNEL,
    PATCH,
    SCAN,
    Report,
    ReportError,
    RunLayout,
    read_json,
)
from gpu2tpu.sandbox import require_sandboxed

FORMAT_VERSION = 1  # docs/formats.md schema_version this reader understands
REQUIRED_METADATA = IDENTITY_FIELDS  # agent, model, organisation: plain names (safetext.py)
REQUIRED_REPORT_KEYS = (
    "schema_version",
    "harness_version",
    "corpus_revision",
    "run_id",
    "task_id",
    "agent",
    "prediction_hash",
    "verdict",
    "files",
)
TRACE = "trace.jsonl"
PROCESS = "process.json"
# Evidence a harness writes since it began keeping it (harness_version did not change then):
# scan.json for the evaluation (the static scan, before the run), kernel.json for every run
# (candidate and references: the supervisor's kernel view). Scans came first.
EVIDENCE_FILES = (SCAN, KERNEL)


class SubmissionRefused(Exception):
    """The run cannot be accepted; the message says what is wrong and what to do."""


@dataclass
class ReportFile:
    path: Path  # absolute path of report.json
    rel: str  # path relative to the run directory
    data: dict[str, Any]
    report: Report
    file_hashes: dict[str, str] = field(default_factory=dict)  # name in `files` -> verified sha256
    # EVIDENCE_FILES the run lacks because the harness that recorded it predates them (stored with
    # the evaluation, so such runs stay marked)
    evidence_absent: list[str] = field(default_factory=list)


def load_entries(path: Path) -> list[dict[str, Any]]:
    """One metadata entry per agent. A file holds one entry (agent, model, organisation, ...) or
    `agents:`, a list of entries; other top-level fields are shared by every entry."""
    data = _load_yaml(path)
    listed = data.pop("agents", None)
    if listed is None:
        entries = [data]
    elif not isinstance(listed, list) or not listed or not all(isinstance(e, dict) for e in listed):
        raise SubmissionRefused(f"metadata file {path}: `agents` must be a non-empty list of mappings")
    else:
        entries = [{**data, **e} for e in listed]
    names = [str(e.get("agent")) for e in entries]
    if len(set(names)) != len(names):
        raise SubmissionRefused(f"metadata file {path} names an agent twice: {names}")
    return [_checked_entry(e, path) for e in entries]


def load_metadata(path: Path) -> dict[str, Any]:
    """Submission metadata (YAML or JSON) for one agent; refuses a file that lacks a field."""
    return _checked_entry(_load_yaml(path), path)


def _load_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise SubmissionRefused(f"metadata file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SubmissionRefused(f"metadata file {path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise SubmissionRefused(f"metadata file {path} must be a mapping of fields")
    return data


def _checked_entry(data: dict[str, Any], path: Path) -> dict[str, Any]:
    missing = [k for k in REQUIRED_METADATA if not str(data.get(k) or "").strip()]
    if missing:
        raise SubmissionRefused(
            f"metadata file {path} lacks required field(s): {', '.join(missing)} "
            f"(required: {', '.join(REQUIRED_METADATA)})"
        )
    try:
        for key in REQUIRED_METADATA:
            check_name(key, data[key])
    except UnsafeName as exc:
        raise SubmissionRefused(f"metadata file {path}: {exc}") from exc
    # Dates and other YAML scalars become JSON-safe strings.
    return json.loads(json.dumps(data, default=str))


def find_reports(run_dir: Path) -> list[Path]:
    """report.json files of a run: those listed by summary.json, else every one below the run
    (the recorder's own reader, record/report.py `RunLayout`; refusals say what is wrong)."""
    layout = RunLayout(run_dir)
    if not layout.root.is_dir():
        raise SubmissionRefused(f"run directory {layout.root} does not exist")
    try:
        paths = layout.listed_reports()
    except ReportError as exc:
        raise SubmissionRefused(str(exc)) from exc
    if paths is None:
        paths = layout.saved_reports()
    if not paths:
        raise SubmissionRefused(f"no report.json under {layout.root}; is it a `gpu2tpu evaluate` run?")
    return [p.resolve() for p in paths]


def recorded_before(files: dict[str, Any]) -> list[str]:
    """The EVIDENCE_FILES a run lacks because the harness that recorded it predates them, read from
    its own list (every harness so far says 0.1.0): a kernel view listed anywhere, the candidate's
    or a reference's, means the harness kept both; a scan alone, that it predates kernel views."""
    if any(Path(name).name == KERNEL for name in files):
        return []
    return [KERNEL] if SCAN in files else [SCAN, KERNEL]


def check_report(
    run_dir: Path,
    path: Path,
    known_harness: tuple[str, ...],
    known_revisions: set[str],
    require_evidence: bool = False,
) -> ReportFile:
    """Load one report and verify versions and the hash of every file it lists. With
    `require_evidence` (runs the maintainers evaluated with this harness) every evidence file is
    required; otherwise those a run recorded before them lacks are marked (`evidence_absent`)."""
    data = _read_json(path)
    missing = [k for k in REQUIRED_REPORT_KEYS if k not in data]
    if missing:
        raise SubmissionRefused(f"{path} lacks {', '.join(missing)}; not a gpu2tpu report")
    try:  # names the page shows and paths are built from
        for key in ("agent", "task_id", "run_id", *(["model"] if data.get("model") else [])):
            check_name(key, data[key])
    except UnsafeName as exc:
        raise SubmissionRefused(f"{path}: {exc}") from exc
    if data["schema_version"] != FORMAT_VERSION:
        raise SubmissionRefused(
            f"{path} has schema_version {data['schema_version']}; this leaderboard reads "
            f"{FORMAT_VERSION}. Upgrade gpu2tpu"
        )
    if data["harness_version"] not in known_harness:
        raise SubmissionRefused(
            f"{path} was graded by unknown harness version {data['harness_version']!r} "
            f"(known: {', '.join(known_harness)}); re-run it with a released gpu2tpu"
        )
    if data["corpus_revision"] not in known_revisions:
        raise SubmissionRefused(
            f"{path} uses unknown corpus revision {data['corpus_revision']!r} "
            f"(known: {', '.join(sorted(known_revisions))}); evaluate against a released corpus"
        )
    try:
        require_sandboxed(data)  # graded code that ran outside bubblewrap proves nothing
    except UserError as exc:
        raise SubmissionRefused(f"{path}: {exc}") from exc
    files = data["files"]
    if not isinstance(files, dict) or not files:
        raise SubmissionRefused(f"{path} lists no files: nothing to re-score from")
    layout = RunLayout(run_dir)
    try:
        typed = Report.from_dict(data, path)
        hashes = typed.verify_files(layout, path.parent)
    except ReportError as exc:
        raise SubmissionRefused(str(exc)) from exc
    report = ReportFile(path=path, rel=path.relative_to(layout.root).as_posix(), data=data,
                        report=typed, file_hashes=hashes)
    never_ran = _never_ran(run_dir, path, files)
    required = [PROCESS, GOAL, PATCH] if never_ran else [*EVALUATION_FILES]
    unlisted = [name for name in required if name not in files]
    if unlisted:
        raise SubmissionRefused(
            f"{path} does not list {', '.join(unlisted)}: every file an evaluation writes must be "
            "listed with its sha256; submit the run exactly as `gpu2tpu evaluate` wrote it"
        )
    report.evidence_absent = [] if require_evidence else recorded_before(files)
    _check_evidence(report, never_ran, require_evidence)
    return report


def _check_evidence(report: ReportFile, never_ran: bool, required: bool) -> None:
    """Every evidence file the run's harness writes is listed: scan.json and kernel.json for a
    candidate that ran, kernel.json for each reference seed and gold run the report lists files of."""
    files = report.data["files"]
    kept = [name for name in EVIDENCE_FILES if name not in report.evidence_absent]
    needed = [] if never_ran else list(kept)
    ref_dir = str((report.data.get("reference") or {}).get("dir") or "").rstrip("/")
    if KERNEL in kept and ref_dir:  # the seed and gold runs; calibration runs have no kernel view
        runs = sorted({name[len(ref_dir) + 1:].split("/")[0] for name in files
                       if name.startswith(ref_dir + "/") and name.count("/") > ref_dir.count("/") + 1}
                      - {CALIBRATION})
        needed += [f"{ref_dir}/{run}/{KERNEL}" for run in runs]
    missing = [name for name in needed if name not in files]
    if missing:
        why = ("a verified run is evaluated by this harness, which writes them" if required else
               "the harness that graded it writes them (it lists "
               f"{'a kernel view' if KERNEL in kept else SCAN})")
        raise SubmissionRefused(
            f"{report.path}: evaluation {report.report.label} does not list {', '.join(missing)}: "
            f"{why}; every evidence file must be listed with its sha256. Submit the run exactly "
            "as `gpu2tpu evaluate` wrote it"
        )


def _never_ran(run_dir: Path, path: Path, files: dict[str, Any]) -> bool:
    """True when the (hash-verified) process.json says the patch was rejected, so no trace."""
    if PROCESS not in files:
        return False
    process_path = resolve_listed(run_dir, path.parent, PROCESS, path)
    return bool(process_path and _read_json(process_path).get("patch_rejected"))


def resolve_listed(run_dir: Path, eval_dir: Path, name: str, source: Path) -> Path | None:
    """A path named in report.json: relative to the evaluation directory, else to the run."""
    for base in (eval_dir, run_dir):
        candidate = _inside(run_dir, name, source, base=base)
        if candidate.is_file():
            return candidate
    return None


def _inside(run_dir: Path, rel: str, source: Path, base: Path | None = None) -> Path:
    """Resolve `rel` under `base` (default the run) and refuse anything outside the run."""
    if Path(rel).is_absolute():
        raise SubmissionRefused(f"{source} names an absolute path {rel!r}; paths must be relative")
    path = ((base or run_dir) / rel).resolve()
    root = run_dir.resolve()
    if path != root and root not in path.parents:
        raise SubmissionRefused(f"{source} names {rel!r}, outside the run directory")
    return path


def _read_json(path: Path) -> dict[str, Any]:
    """The recorder's JSON reader (record/report.py), its refusal worded for a submitter."""
    try:
        return read_json(path)
    except ReportError as exc:
        raise SubmissionRefused(f"cannot read {exc}") from exc
