"""The trajectory file: everything one attempt did, in order, with timing, usage and cost."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
REDACTED = "[REDACTED]"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 8:  # short strings would blank out ordinary text
            text = text.replace(secret, REDACTED)
    return text


@dataclass
class Trajectory:
    """Collects one attempt; `save` writes it as JSON with secrets removed."""

    header: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    outcome: dict[str, Any] = field(default_factory=dict)
    started_at: str = field(default_factory=now_iso)
    _t0: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return round(time.monotonic() - self._t0, 3)

    def event(self, kind: str, **data: Any) -> dict[str, Any]:
        entry = {"type": kind, "t": self.elapsed(), **data}
        self.events.append(entry)
        return entry

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "schema_version": 1,
            **self.header,
            "started_at": self.started_at,
            "ended_at": now_iso(),
            "wall_time_s": self.elapsed(),
            "messages": self.messages,
            "events": self.events,
            "outcome": self.outcome,
        }

    def save(self, path: Path, secrets: list[str]) -> None:
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False, default=str)
        text = redact(text, secrets)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text + "\n")
        tmp.replace(path)
