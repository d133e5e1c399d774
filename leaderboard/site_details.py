"""The page's drill-down data, written compact: `details/strings.js` once, `details/a<N>.js` per agent.

At 200 agents x 160 tasks x 5 attempts one object per evaluation with its evidence sentences made
1.4 MB per agent. Here each file is columnar and each evidence line is a reference plus numbers:

- An evidence line is cut at its digit runs into literal pieces and the runs. Lines with the same
  criterion, ok, source and pieces share a skeleton. A run that takes at most FEW values over the
  whole page (a step number, the "0" of "0.53") is written into the *entry*
  `[criterion, ok, source, pieces]`, one per skeleton and such values; the others are written per
  line (an integer, or a string where the digits would not survive as one: a leading zero, over
  15 digits). Entries two or more agents use go to `strings.js` (LB_STRINGS), the most used first,
  the rest to the agent's own file (`local`), numbered after the shared ones.
- An evaluation's evidence is one flat list: entry index, then that entry's values, repeated.
- Categorical fields (task, trust, category, ...) index the file's `words`; booleans are packed in
  `flags`, two bits each (0 unknown, 1 false, 2 true) then one bit per criterion; a column that is
  the same for every evaluation of the agent is written once, as a scalar.
- Figures the page prints with a fixed number of decimals are rounded as its `toFixed` would
  (half away from zero, on the exact value), so the reader sees the same digits.

The text was cleaned by public_text before it comes here; the files go out through json_for_html.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from gpu2tpu.leaderboard.safetext import json_for_html

FORMAT = 1  # the page refuses a details file of another format, naming both
DIGIT_RUN = re.compile(r"(\d+)")
MAX_INT_DIGITS = 15  # exact as a JavaScript number
ID_WIDTH = 16  # evaluation ids as the page shows them
TRISTATE_FLAGS = ("migrated", "silent", "claimed", "reported_migrated", "verdict_changed")
WORD_COLUMNS = ("task", "trust", "category", "price_version", "goal_metric", "references", "absent")
# the page's decimals for each figure: 'usd' is 4 below $1, else 2 (site.js usd()); None: as is
NUMBER_COLUMNS: dict[str, int | str | None] = {
    "attempt": None, "agent_usd": "usd", "exec_usd": "usd", "chip_s": 1, "step_ms": 1,
    "ref_step_ms": 1, "compiles": None, "goal": 4,
}

Skeleton = tuple[int, Any, Any, tuple[str, ...]]  # criterion, ok, source, literal pieces
FEW = 16  # a digit run with at most this many values over the page is written into the entries


def split_digits(text: str) -> tuple[tuple[str, ...], list[int | str]]:
    """`text` as literal pieces and the digit runs between them (len(pieces) = len(runs) + 1)."""
    parts = DIGIT_RUN.split(text)  # pieces and runs alternate (the pattern captures)
    values: list[int | str] = [
        int(r) if len(r) <= MAX_INT_DIGITS and (r == "0" or r[0] != "0") else r for r in parts[1::2]]
    return tuple(parts[::2]), values


def shown(value: Any, decimals: int | str | None) -> Any:
    """`value` rounded to what the page prints (JavaScript toFixed), where that changes nothing
    the reader sees; otherwise `value` unchanged."""
    if not isinstance(value, float) or decimals is None:
        return value
    if not math.isfinite(value) or abs(value) >= 1e21:  # toFixed prints these in full
        return value
    digits = (4 if value < 1 else 2) if decimals == "usd" else int(decimals)
    exact = Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    rounded = float(exact)
    if decimals == "usd" and (rounded < 1) != (value < 1):
        return value  # rounding would change how many decimals usd() prints
    if rounded == 0 and value < 0:
        return value  # toFixed prints -0.0 as 0.0: keep the sign the reader would see
    return rounded


class Evidence:
    """Every evidence line of the page as entries and per-line values, in three steps: `add` each
    line (cut at its digit runs), `resolve` each to its entry once all are added, `encode` per agent."""

    def __init__(self) -> None:
        self._skeleton_ids: dict[Skeleton, int] = {}
        self._skeletons: list[Skeleton] = []
        self._seen: list[list[set[int | str]]] = []  # per skeleton and run: values, up to FEW + 1
        self._few: list[list[bool]] = []  # per skeleton and run: written into the entry
        self._entry_ids: dict[tuple[int, tuple[int | str, ...]], int] = {}
        self._entries: list[list[Any]] = []
        self._uses: list[int] = []
        self._agents: list[set[int]] = []

    def add(self, line: list[Any]) -> tuple[int, list[int | str]]:
        """One line [criterion, ok, text, source]: (its skeleton, its digit runs)."""
        crit, ok, text, source = line
        pieces, values = split_digits(text)
        key = (crit, ok, source, pieces)
        skeleton = self._skeleton_ids.get(key)
        if skeleton is None:
            skeleton = self._skeleton_ids[key] = len(self._skeletons)
            self._skeletons.append(key)
            self._seen.append([set() for _ in values])
        for seen, value in zip(self._seen[skeleton], values, strict=True):
            if len(seen) <= FEW:
                seen.add(value)
        return skeleton, values

    def resolve(self, agent: int, line: tuple[int, list[int | str]]) -> tuple[int, list[int | str]]:
        """A line of `agent` from `add`: (its entry, the values the entry leaves out); call after
        every line was added."""
        skeleton, values = line
        if len(self._few) < len(self._skeletons):
            self._few = [[len(seen) <= FEW for seen in runs] for runs in self._seen]
        few = self._few[skeleton]
        key = (skeleton, tuple(v for v, inline in zip(values, few, strict=True) if inline))
        entry = self._entry_ids.get(key)
        if entry is None:
            entry = self._entry_ids[key] = len(self._entries)
            crit, ok, source, pieces = self._skeletons[skeleton]
            out = [pieces[0]]
            for i, value in enumerate(values):
                if few[i]:
                    out[-1] += str(value) + pieces[i + 1]
                else:
                    out.append(pieces[i + 1])
            self._entries.append([crit, ok, source, out])
            self._uses.append(0)
            self._agents.append(set())
        self._uses[entry] += 1
        self._agents[entry].add(agent)
        return entry, [v for v, inline in zip(values, few, strict=True) if not inline]

    def entry(self, entry: int) -> list[Any]:
        """[criterion, ok, source, pieces]: the page writes a value between two pieces."""
        return self._entries[entry]

    def shared(self) -> list[int]:
        """Entries more than one agent uses (strings.js), the most used first (shorter indices)."""
        return sorted((e for e in range(len(self._entries)) if len(self._agents[e]) > 1),
                      key=lambda e: -self._uses[e])

    @staticmethod
    def encode(lines: Iterable[tuple[int, list[int | str]]], index: dict[int, int],
               local: list[int]) -> list[int | str]:
        """One evaluation's resolved lines as [entry index, values..., ...]; entries not in `index`
        (shared ones first, then this agent's) are appended to `local` and indexed."""
        flat: list[int | str] = []
        for entry, values in lines:
            at = index.get(entry)
            if at is None:
                at = index[entry] = len(index)
                local.append(entry)
            flat.append(at)
            flat.extend(values)
        return flat


def write_details(details: Path, agent_evals: dict[int, list[dict[str, Any]]]) -> None:
    """Write strings.js and a<N>.js for every agent index in `agent_evals` (records as
    site._evaluations makes them, `ev` lines [criterion, ok, text, source])."""
    evidence = Evidence()
    added = {i: [[evidence.add(line) for line in e["ev"]] for e in evals]
             for i, evals in agent_evals.items()}
    lines = {i: [[evidence.resolve(i, line) for line in per_eval] for per_eval in added.pop(i)]
             for i in agent_evals}
    shared = evidence.shared()
    (details / "strings.js").write_text(
        f"LB_STRINGS({FORMAT},{json_for_html([evidence.entry(e) for e in shared])});\n")
    for i, evals in agent_evals.items():
        index = {e: at for at, e in enumerate(shared)}
        local: list[int] = []
        ev = [evidence.encode(per_eval, index, local) for per_eval in lines.pop(i)]
        payload = {**agent_columns(evals), "ev": ev, "local": [evidence.entry(e) for e in local]}
        (details / f"a{i}.js").write_text(f"LB_DETAIL({i},{FORMAT},{json_for_html(payload)});\n")


def agent_columns(evals: list[dict[str, Any]]) -> dict[str, Any]:
    """One agent's evaluations as columns (everything but the evidence)."""
    words: list[Any] = [None]  # index 0 is always null
    word_at: dict[Any, int] = {None: 0}

    def word(value: Any) -> int:
        key = tuple(value) if isinstance(value, list) else value  # absent: a list of names
        if key not in word_at:
            word_at[key] = len(words)
            words.append(value)
        return word_at[key]

    cols: dict[str, Any] = {}
    for name in WORD_COLUMNS:
        cols[name] = _column([word(e[name]) for e in evals])
    for name, decimals in NUMBER_COLUMNS.items():
        cols[name] = _column([shown(e[name], decimals) for e in evals])
    cols["flags"] = _column([_flags(e) for e in evals])
    links = {str(n): e["links"] for n, e in enumerate(evals) if e["links"]}
    ids = [e["id"] for e in evals]  # 16 hex digits each: one string, the page slices it
    return {"n": len(evals), "id": "".join(ids) if all(len(x) == ID_WIDTH for x in ids) else ids,
            "words": words, "cols": cols, "links": links}


def _column(values: list[Any]) -> Any:
    """A scalar when every value is the same (the page reads `Array.isArray(c) ? c[n] : c`)."""
    if values and all(v == values[0] and type(v) is type(values[0]) for v in values):
        return values[0]
    return values


def _flags(e: dict[str, Any]) -> int:
    bits = 0
    for n, name in enumerate(TRISTATE_FLAGS):
        value = e[name]
        bits |= (0 if value is None else 2 if value else 1) << (2 * n)
    for n, passed in enumerate(e["crit"]):
        bits |= int(bool(passed)) << (2 * len(TRISTATE_FLAGS) + n)
    return bits
