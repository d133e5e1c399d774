"""Text that reaches the leaderboard store, its page and its files: every rule in one home.

- Names a submitter gives (agent, model, organisation; run and task ids in reports) must be plain
  names: `check_name` refuses anything else, naming the field, the character and what is allowed.
- Text the graded code controls (crash messages, exception text, log excerpts, trace strings) is
  published only through `public_text`: control characters removed, absolute host paths reduced to
  their last component, capped.
- JSON embedded in HTML or in a script goes through `json_for_html`: no raw `<`, `>`, `&`, U+2028
  or U+2029, so no string can close the <script> element or open an HTML comment in it.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

MAX_NAME = 100  # characters in any name field
NAME_PUNCTUATION = " ._-+/:@()"  # model, organisation: 'org/model-1.5 (preview)'
ID_PUNCTUATION = "._-+@"  # agent, task_id: also directory names, as harness/predictions.py allows
RUN_PUNCTUATION = " ._-+:@()"  # run_id: a directory name, so no '/'
NAME_RULES = {
    "agent": ID_PUNCTUATION,
    "task_id": ID_PUNCTUATION,
    "run_id": RUN_PUNCTUATION,
    "model": NAME_PUNCTUATION,
    "organisation": NAME_PUNCTUATION,
}
IDENTITY_FIELDS = ("agent", "model", "organisation")  # required in submission metadata
TEXT_LIMIT = 300  # characters of graded-code text on the page and in the store
FILE_TEXT_LIMIT = 2000  # per string in the report, trace and trajectory copied next to the page

_SEG = r"[^\s/\\'\"`<>|:;,()\[\]{}]+"
_PATH = re.compile(
    rf"(?:\bfile://|(?<![\w.~/\\:-]))"
    rf"(?:/+{_SEG}(?:/+{_SEG})+|~/(?:{_SEG}/+)*{_SEG}|[A-Za-z]:\\(?:{_SEG}\\+)*{_SEG})[/\\]?"
)
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class UnsafeName(ValueError):
    """A name field holds something other than a plain name; the message says what is allowed."""


def allowed(field: str) -> str:
    """The rule for `field`, in words (for errors and docs)."""
    punct = NAME_RULES.get(field, NAME_PUNCTUATION)
    chars = " ".join(c for c in punct if c != " ")
    return (f"ASCII letters, digits{', space' if ' ' in punct else ''} and {chars}, starting with "
            f"a letter or digit, at most {MAX_NAME} characters")


def check_name(field: str, value: Any) -> str:
    """`value` if it is a plain name for `field` (see NAME_RULES), else UnsafeName."""
    if not isinstance(value, str):
        raise UnsafeName(f"{field} must be text, not {type(value).__name__} {value!r} "
                         "(quote it in YAML)")
    punct = NAME_RULES.get(field, NAME_PUNCTUATION)
    for i, ch in enumerate(value):
        ok = (ch.isascii() and ch.isalnum()) or (i > 0 and ch in punct)
        if not ok:
            raise UnsafeName(f"{field} {_shown(value)} holds {_char(ch)} at position {i + 1}; "
                             f"allowed: {allowed(field)}")
    problem = ("is empty" if not value else f"is {len(value)} characters long"
               if len(value) > MAX_NAME else "ends with a space" if value.endswith(" ") else "")
    if problem:
        raise UnsafeName(f"{field} {_shown(value)} {problem}; allowed: {allowed(field)}")
    return value


def public_text(text: Any, limit: int = TEXT_LIMIT, multiline: bool = False) -> str:
    """Graded-code text made fit to publish: control and format characters removed (line breaks
    become spaces unless `multiline`), absolute paths reduced to '…/<last component>', and at
    most `limit` characters (the middle cut out, so a traceback keeps its last line)."""
    clean = str(text)
    if _NOT_PRINTABLE_ASCII.search(clean):  # the slow path only for text that needs it
        out = []
        for ch in clean:
            cat = unicodedata.category(ch)
            if ch == "\n" and multiline:
                out.append(ch)
            elif ch in "\t\n\r\v\f" or cat in ("Zl", "Zp"):
                out.append(" ")
            elif cat not in ("Cc", "Cf", "Cs"):
                out.append(ch)
        clean = "".join(out)
    clean = _PATH.sub(_redact, clean).strip()
    if len(clean) > limit:
        head = limit * 2 // 3
        clean = clean[:head] + "…" + clean[len(clean) - (limit - head - 1):]
    return clean


def public_json(value: Any, limit: int = TEXT_LIMIT, multiline: bool = False) -> Any:
    """`value` with every string (keys included) passed through public_text."""
    if isinstance(value, str):
        return public_text(value, limit, multiline)
    if isinstance(value, dict):
        return {public_text(k, limit): public_json(v, limit, multiline) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [public_json(v, limit, multiline) for v in value]
    return value


def json_for_html(value: Any) -> str:
    """Compact JSON safe inside <script> (and as a JS literal): the characters that could end the
    element, start an HTML comment or end a JS line are \\u-escaped; NaN and infinities are null."""
    text = json.dumps(_finite(value), separators=(",", ":"), allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _ESCAPES[m.group()], text)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _redact(match: re.Match[str]) -> str:
    parts = [p for p in re.split(r"[/\\]+", match.group()) if p]
    return "…/" + parts[-1] if parts else "…"


def _char(ch: str) -> str:
    return f"{ch!r} (U+{ord(ch):04X})"


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:37] + "...")  # repr escapes controls
