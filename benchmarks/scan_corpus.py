"""Time the static scanner over every project record's snapshot (read-only: records untouched).

    .venv/bin/python benchmarks/scan_corpus.py [--projects-dir corpus/projects]
        [--mirror-root /work/.mirror] [--repeat 1] [--json out.json]

Prints one line per record (seconds, files, Python lines) and the totals; with --json also writes
them as a JSON object (schema_version 1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from gpu2tpu.corpus.records import PROJECTS_DIR, find_mirror, load_records
from gpu2tpu.corpus.scanner import SCANNER_VERSION, scan_path
from gpu2tpu.corpus.source import SourceError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects-dir", type=Path, default=PROJECTS_DIR)
    ap.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--repeat", type=int, default=1, help="scan each record N times, keep the best")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    rows = []
    t_all = time.perf_counter()
    for rec in load_records(args.projects_dir):
        data = rec.data or {}
        repo, commit = data.get("repo"), data.get("commit")
        if not isinstance(repo, str) or not isinstance(commit, str):
            print(f"{rec.path.name}: skipped (no repo/commit)", file=sys.stderr)
            continue
        try:
            mirror = find_mirror(repo, args.mirror_root)
            best = float("inf")
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                scan = scan_path(mirror, commit, repo=repo)
                best = min(best, time.perf_counter() - t0)
        except (SourceError, FileNotFoundError) as exc:
            print(f"{repo}: FAILED: {exc}", file=sys.stderr)
            continue
        size = scan["size"]
        rows.append({"repo": repo, "seconds": round(best, 4), "files": size["files"],
                     "python_lines": size["python_lines"], "tier": scan["tier"]})
        print(f"{repo:<55} {best:7.3f}s {size['files']:6d} files "
              f"{size['python_lines']:7d} py lines", flush=True)
    wall = time.perf_counter() - t_all
    secs = [r["seconds"] for r in rows]
    summary = {
        "schema_version": 1, "scanner_version": SCANNER_VERSION, "records": len(rows),
        "total_scan_s": round(sum(secs), 3), "wall_s": round(wall, 3),
        "median_s": round(statistics.median(secs), 4) if secs else None,
        "max_s": max(secs) if secs else None,
        "python_lines": sum(r["python_lines"] for r in rows),
    }
    print(json.dumps(summary))
    if args.json:
        args.json.write_text(json.dumps({**summary, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
