"""Prediction lines (agent output) read from JSONL; a malformed line is an error naming the line."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.record.report import evaluation_name

SCHEMA_VERSION = 1
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "model": str, "claimed_success": bool, "agent_cost_usd": (int, float),
             "input_tokens": int, "output_tokens": int, "human_interventions": int, "attempt": int,
             "wall_time_s": (int, float), "trajectory": str, "error": str}


@dataclass
class Prediction:
    line: int
    task_id: str
    agent: str
    patch: str | None
    migrated_dir: str | None
    attempt: int
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """`agent/task[.attempt]`: also the evaluation's directory inside the run directory."""
        return evaluation_name(self.agent, self.task_id, self.attempt)

    def content_hash(self) -> str:
        """Hash of what is evaluated: the patch text, or the migrated directory's files."""
        digest = hashlib.sha256()
        if self.patch is not None:
            digest.update(b"patch\0" + self.patch.encode())
        elif self.migrated_dir is not None:
            root = Path(self.migrated_dir)
            for p in sorted(q for q in root.rglob("*") if ".git" not in q.parts):
                if p.is_symlink():  # a link's own target text, never the file it points to
                    data = b"link\0" + os.readlink(p).encode()
                elif p.is_file():
                    data = p.read_bytes()
                else:
                    continue
                digest.update(p.relative_to(root).as_posix().encode() + b"\0" + data)
        return digest.hexdigest()


class PredictionError(UserError, ValueError):
    """A predictions file or line that cannot be read: the submitter's input (exit status 2)."""


def parse_line(text: str, number: int, base: Path) -> Prediction:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
    if not isinstance(raw, dict):
        raise PredictionError(f"line {number}: expected a JSON object")
    if raw.get("schema_version") != SCHEMA_VERSION:
        raise PredictionError(f"line {number}: schema_version must be {SCHEMA_VERSION}, "
                              f"got {raw.get('schema_version')!r}")
    for key in ("task_id", "agent"):
        if not isinstance(raw.get(key), str) or not _SAFE.match(raw[key]):
            raise PredictionError(f"line {number}: {key!r} must be a name of letters, digits and ._@+-")
    has_patch, has_dir = isinstance(raw.get("patch"), str), isinstance(raw.get("migrated_dir"), str)
    if has_patch == has_dir:
        raise PredictionError(f"line {number}: give exactly one of 'patch' or 'migrated_dir'")
    for key, kind in _OPTIONAL.items():
        if raw.get(key) is not None and (not isinstance(raw[key], kind) or
                                         (kind is int and isinstance(raw[key], bool))):
            raise PredictionError(f"line {number}: {key!r} has the wrong type ({type(raw[key]).__name__})")
    for key, value in raw.items():  # a JSON escape of a lone surrogate decodes, then cannot encode
        if isinstance(value, str) and not _encodes(value):
            raise PredictionError(f"line {number}: {key!r} holds an unpaired surrogate (a lone "
                                  "\\ud800-\\udfff escape): write the text as valid Unicode")
    attempt = int(raw.get("attempt") or 1)
    if attempt < 1:
        raise PredictionError(f"line {number}: 'attempt' must be 1 or more")
    migrated = raw.get("migrated_dir")
    if migrated is not None and not Path(migrated).is_absolute():
        migrated = str((base / migrated).resolve())
    fields = {k: raw.get(k) for k in _OPTIONAL}
    return Prediction(number, raw["task_id"], raw["agent"], raw.get("patch"), migrated, attempt, fields)


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def read_predictions(path: Path) -> tuple[list[Prediction], list[str]]:
    """(valid predictions, one error per bad line); a repeated (agent, task, attempt) is an error."""
    if not path.is_file():
        raise PredictionError(f"{path}: no such predictions file (give a JSONL file, one prediction "
                              "per line; see docs/formats.md)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise PredictionError(f"{path}: not UTF-8 text (byte {exc.start}, line {line}); predictions "
                              "are JSONL in UTF-8: re-encode the file") from exc
    preds: list[Prediction] = []
    errors: list[str] = []
    seen: set[tuple[str, str, int]] = set()
    for number, line_text in enumerate(text.splitlines(), start=1):
        if not line_text.strip():
            continue
        try:
            pred = parse_line(line_text, number, path.parent)
        except PredictionError as exc:
            errors.append(f"{path}:{exc}")
            continue
        key = (pred.agent, pred.task_id, pred.attempt)
        if key in seen:
            errors.append(f"{path}:line {number}: duplicate of an earlier line for {pred.label}")
            continue
        seen.add(key)
        preds.append(pred)
    return preds, errors
