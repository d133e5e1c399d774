"""SQL that names the criteria is written once per criterion: from the harness's CRITERIA registry.

In a view's .sql file (or a SQL string here), a line holding `{criterion}` is repeated for each
criterion in grading order, with `{criterion}` (its name), `{passed_before}` (`runs AND numerics
AND ...` for the criteria graded before it, or nothing) and `{comma}` ("," on every repetition but
the last) filled in. No other line is touched.
"""

from __future__ import annotations

from gpu2tpu.judge.criteria import CRITERION_NAMES


def expand_criteria(sql: str, names: tuple[str, ...] = CRITERION_NAMES) -> str:
    out: list[str] = []
    for line in sql.splitlines():
        if "{criterion}" not in line:
            out.append(line)
            continue
        for i, name in enumerate(names):
            before = "".join(f"{n} AND " for n in names[:i])
            out.append(line.replace("{criterion}", name).replace("{passed_before}", before)
                       .replace("{comma}", "," if i < len(names) - 1 else ""))
    return "\n".join(out) + ("\n" if sql.endswith("\n") else "")
