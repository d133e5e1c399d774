"""The part of a patch that `git apply` applies: file headers and hunks, nothing between them.

A patch may carry text git ignores (a commit message before the first header, notes between
files). The static scan (record/tamper_scan.py) counts a patch's `-` lines as code the original
already holds, so a `-` copy of each added line written into that text blinded it (issue 39). The
harness gives the scan this part only: what is scanned is what is applied.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
# lines of a file's header in git's extended format, and the unified format's own
_HEADERS = ("diff --git ", "--- ", "+++ ", "index ", "new file mode ", "deleted file mode ",
            "old mode ", "new mode ", "similarity index ", "dissimilarity index ", "rename from ",
            "rename to ", "copy from ", "copy to ", "Binary files ", "GIT binary patch")


def applied_part(patch: str) -> str:
    """`patch` without the lines outside file headers and hunks (hunk lines counted as git counts
    them: a hunk's header says how many old and new lines follow)."""
    kept: list[str] = []
    old_left = new_left = 0
    for line in patch.split("\n"):  # git's lines: a CRLF line keeps its \r
        tag = line[:1]
        if (old_left > 0 or new_left > 0) and tag in (" ", "", "-", "+", "\\"):
            # "\ No newline at end of file" belongs to the hunk and counts no line
            old_left -= tag in (" ", "", "-")
            new_left -= tag in (" ", "", "+")
            kept.append(line)
            continue
        old_left = new_left = 0  # outside a hunk (or one cut short, which git refuses)
        if m := _HUNK.match(line):
            old_left, new_left = int(m[1] or 1), int(m[2] or 1)
            kept.append(line)
        elif line.startswith(_HEADERS) or tag == "\\":
            kept.append(line)
    return "\n".join(kept) + ("\n" if patch.endswith("\n") else "")
