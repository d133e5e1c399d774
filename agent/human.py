"""Human help for the agent: ask (interactive), never (no help), script:FILE (replayed answers)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import yaml

from gpu2tpu.errors import UserError

NO_HELP = "No human help is available. Decide on your own and continue."
SCRIPT_EXHAUSTED = "No further answers are available. Decide on your own and continue."


@dataclass
class Exchange:
    question: str
    answer: str
    source: str  # "human", "script", or "none" (no help was given)


@dataclass
class Human:
    """Answers `ask_human` calls and keeps every exchange."""

    mode: str  # "ask", "never" or "script"
    answers: list[str] = field(default_factory=list)
    stdin: TextIO | None = None
    stdout: TextIO | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    _next: int = 0

    def fresh(self) -> Human:
        """A copy with no exchanges, for the next attempt (a script replays from its start)."""
        return Human(self.mode, list(self.answers), self.stdin, self.stdout)

    def ask(self, question: str) -> Exchange:
        if self.mode == "ask":
            ex = self._ask_live(question)
        elif self.mode == "script" and self._next < len(self.answers):
            ex = Exchange(question, self.answers[self._next], "script")
            self._next += 1
        elif self.mode == "script":
            ex = Exchange(question, SCRIPT_EXHAUSTED, "none")
        else:
            ex = Exchange(question, NO_HELP, "none")
        self.exchanges.append(ex)
        return ex

    def _ask_live(self, question: str) -> Exchange:
        out = self.stdout or sys.stderr
        inp = self.stdin or sys.stdin
        out.write(f"\n[agent asks] {question}\n[your answer, end with an empty line]\n")
        out.flush()
        lines: list[str] = []
        while True:
            line = inp.readline()
            if not line or not line.strip():
                break
            lines.append(line.rstrip("\n"))
        answer = "\n".join(lines).strip()
        if not answer:
            return Exchange(question, NO_HELP, "none")
        return Exchange(question, answer, "human")

    @property
    def interventions(self) -> int:
        """Every ask_human call counts, answered or not (issue 5): asking is the effort measured."""
        return len(self.exchanges)


def load_answers(path: Path) -> list[str]:
    """A YAML or JSON list of answer strings."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"--human script:{path}: cannot read: {exc}") from exc
    try:
        # BaseLoader keeps every scalar a string: an answer `yes` stays "yes", not True.
        data = json.loads(text) if path.suffix == ".json" else yaml.load(text, yaml.BaseLoader)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"--human script:{path}: not valid JSON/YAML: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(a, str | int | float) for a in data):
        raise UserError(f"--human script:{path}: must be a list of answer strings")
    return [str(a) for a in data]


def parse_human(spec: str) -> Human:
    """`ask`, `never` or `script:FILE`."""
    if spec in ("ask", "never"):
        return Human(spec)
    if spec.startswith("script:") and spec[len("script:"):]:
        return Human("script", load_answers(Path(spec[len("script:"):])))
    raise UserError(f"--human {spec!r}: use ask, never or script:FILE (a YAML/JSON list)")
