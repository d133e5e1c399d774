"""What a full labelled suite last proved, per task: `tasks/<id>/validated.json`.

`gpu2tpu validate` writes it for each task whose gold, alternatives and broken migrations were all
graded as labelled, keyed by what decided those verdicts: the task's content hash (which leaves
this file out), the recorder hash (what produced the evidence: record/, sandbox/, the task
machinery), the judge hash (what turned it into verdicts: judge/) and the runtime (torch,
torch_xla); gpu2tpu/rooms.py computes both hashes. It also pins the digest of the reference bundle
and of the kept labelled runs it was validated with (harness/evidence.py).

A record whose judge hash alone differs is re-validated by re-grading the kept runs (minutes); any
other difference re-runs the suite. CI grades every gold, and the whole labelled suite of each task
whose record no longer holds (`validate --changed`); a release is checked with `validate --all`.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from gpu2tpu import rooms
from gpu2tpu.tasks.spec import VALIDATED_FILE, RunSpec

SCHEMA_VERSION = 2
# what each key field covers, in the order a difference is reported
FIELDS = (("content_hash", "the task's files"), ("recorder", "the recording code (record/, sandbox/, "
          "the task machinery)"), ("runtime", "torch or torch_xla"), ("judge", "the judging code (judge/)"))


def runtime() -> dict[str, str | None]:
    from gpu2tpu.record.execution import runtime_versions

    return {k: v for k, v in runtime_versions().items() if k in ("torch", "torch_xla")}


def key(spec: RunSpec, recorder: str | None = None, judge: str | None = None) -> dict[str, Any]:
    return {"content_hash": spec.content_hash, "recorder": recorder or rooms.recorder_hash(),
            "judge": judge or rooms.judge_hash(), "runtime": runtime()}


def read(spec: RunSpec) -> dict[str, Any] | None:
    path = spec.task_dir / VALIDATED_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def changed(spec: RunSpec, recorder: str | None = None, judge: str | None = None) -> str | None:
    """Why the task's labelled suite must be validated again, or None when its record still holds."""
    record = read(spec)
    if record is None:
        return "never validated"
    want = key(spec, recorder, judge)
    for field, what in FIELDS:
        if record.get(field) != want[field]:
            return f"{what} changed since it was validated"
    return None


def judge_only(spec: RunSpec) -> bool:
    """Whether the record differs from this code in the judge hash alone: its evidence, if kept,
    can be re-graded instead of run again."""
    record = read(spec)
    if record is None:
        return False
    want = key(spec)
    return record.get("judge") != want["judge"] and all(
        record.get(f) == want[f] for f, _ in FIELDS if f != "judge")


def write(spec: RunSpec, migrations: int, wall_s: float, how: str,
          pins: dict[str, Any] | None = None) -> Path:
    """Record a full labelled suite graded as labelled (the caller checked it). `how`: `ran` or
    `regraded` (kept runs graded again); `pins`: the digests of the reference bundle and the kept
    runs it was validated with."""
    path = spec.task_dir / VALIDATED_FILE
    record = {"schema_version": SCHEMA_VERSION, "task_id": spec.task_id, **key(spec),
              "how": how, **(pins or {}), "migrations": migrations, "wall_s": round(wall_s, 1),
              "validated_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def pinned_reference_digest(spec: RunSpec) -> str | None:
    """The digest of the reference bundle the task's record was validated with (None: no pin)."""
    pin = (read(spec) or {}).get("references")
    return pin.get("digest") if isinstance(pin, dict) else None


def cost_per_migration(spec: RunSpec) -> float:
    """The last validation's wall seconds per migration (0 when never validated): what grading one
    of the task's migrations costs, which CI orders and picks by."""
    record = read(spec) or {}
    return float(record.get("wall_s") or 0.0) / max(1, int(record.get("migrations") or 1))
