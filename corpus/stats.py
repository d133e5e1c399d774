"""Distribution tables (domain x difficulty bucket, tiers) shared by `corpus stats` and the card."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from gpu2tpu.corpus.check import DOMAINS

BUCKET_NAMES = ("easy", "medium", "hard")


def domain_bucket(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """domain -> bucket -> count, every domain and bucket present (unscanned rows under '?')."""
    table = {d: dict.fromkeys((*BUCKET_NAMES, "?"), 0) for d in DOMAINS}
    for row in rows:
        dom = row.get("domain") if row.get("domain") in table else "other"
        bucket = row.get("bucket") if row.get("bucket") in BUCKET_NAMES else "?"
        table[str(dom)][str(bucket)] += 1
    return table


def tier_counts(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """tier -> split -> count (tiers 0..3 plus '?' for unscanned)."""
    out = {str(t): {"main": 0, "reference_only": 0} for t in (0, 1, 2, 3, "?")}
    for row in rows:
        tier = str(row.get("tier")) if row.get("tier") in (0, 1, 2, 3) else "?"
        split = "main" if row.get("split") == "main" else "reference_only"
        out[tier][split] += 1
    return out


def markdown_domain_table(table: dict[str, dict[str, int]]) -> str:
    show_unknown = any(v["?"] for v in table.values())
    cols = [*BUCKET_NAMES, *(["unscanned"] if show_unknown else [])]
    lines = ["| domain | " + " | ".join(cols) + " | total |",
             "|---|" + "---:|" * (len(cols) + 1)]
    totals = Counter[str]()
    for dom, counts in table.items():
        vals = [counts[b] for b in BUCKET_NAMES] + ([counts["?"]] if show_unknown else [])
        totals.update({c: v for c, v in zip(cols, vals, strict=True)})
        lines.append(f"| {dom} | " + " | ".join(map(str, vals)) + f" | {sum(vals)} |")
    lines.append("| **total** | " + " | ".join(str(totals[c]) for c in cols)
                 + f" | {sum(totals.values())} |")
    return "\n".join(lines)


def markdown_tier_table(tiers: dict[str, dict[str, int]]) -> str:
    names = {"0": "0 device-agnostic", "1": "1 CUDA runtime idioms",
             "2": "2 precision / distribution / compilation",
             "3": "3 custom kernels / CUDA-only packages", "?": "unscanned"}
    lines = ["| tier | main | reference_only | total |", "|---|---:|---:|---:|"]
    for tier, c in tiers.items():
        if tier == "?" and not sum(c.values()):
            continue
        lines.append(f"| {names[tier]} | {c['main']} | {c['reference_only']} | {sum(c.values())} |")
    return "\n".join(lines)


def text_report(rows: list[dict[str, Any]]) -> str:
    """Plain-text tables for the terminal."""
    table = domain_bucket(rows)
    width = max(len(d) for d in table) + 2
    out = [f"{'domain':<{width}}" + "".join(f"{b:>8}" for b in (*BUCKET_NAMES, "?", "total"))]
    for dom, c in table.items():
        vals = [c[b] for b in (*BUCKET_NAMES, "?")]
        out.append(f"{dom:<{width}}" + "".join(f"{v:>8}" for v in (*vals, sum(vals))))
    col = [sum(c[b] for c in table.values()) for b in (*BUCKET_NAMES, "?")]
    out.append(f"{'total':<{width}}" + "".join(f"{v:>8}" for v in (*col, sum(col))))
    out.append("")
    out.append(f"{'tier':<6}{'main':>8}{'ref_only':>10}{'total':>8}")
    for tier, c in tier_counts(rows).items():
        out.append(f"{tier:<6}{c['main']:>8}{c['reference_only']:>10}{sum(c.values()):>8}")
    return "\n".join(out)


def svg_chart(table: dict[str, dict[str, int]]) -> str:
    """A horizontal stacked bar chart (domain x bucket) as a standalone SVG document."""
    colours = {"easy": "#4caf50", "medium": "#ffb300", "hard": "#e53935"}
    if any(c.get("?") for c in table.values()):
        colours["?"] = "#9e9e9e"
    left, top, bar_h, gap, scale = 110, 40, 18, 6, 14
    peak = max([sum(c.values()) for c in table.values()] + [1])
    width = max(left + peak * scale + 60, left + 90 * len(colours) + 40)
    height = top + len(table) * (bar_h + gap) + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="16" font-weight="bold">'
             'Projects per domain and difficulty</text>']
    x = left
    for name, colour in colours.items():
        parts.append(f'<rect x="{x}" y="24" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14}" y="33">{"unscanned" if name == "?" else name}</text>')
        x += 90
    for i, (dom, counts) in enumerate(table.items()):
        y = top + i * (bar_h + gap)
        parts.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{dom}</text>')
        x = left
        for name, colour in colours.items():
            n = counts.get(name, 0)
            if n:
                parts.append(f'<rect x="{x}" y="{y}" width="{n * scale}" height="{bar_h}" '
                             f'fill="{colour}"><title>{dom} {name}: {n}</title></rect>')
                x += n * scale
        parts.append(f'<text x="{x + 4}" y="{y + 13}">{sum(counts.values())}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
