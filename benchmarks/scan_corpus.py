"""Time the static scanner over every project record's snapshot (read-only: records untouched).

    .venv/bin/python benchmarks/scan_corpus.py [--projects-dir corpus/projects]
        [--mirror-root /work/.mirror] [--repeat 1] [--json out.json] [--tiny]

Prints one line per record (seconds, files, Python lines) and the totals; with --json also writes
them as a JSON object (schema_version 1). `--tiny` (CI, tests/test_benchmarks.py; needs no mirrors):
scans two small synthetic git snapshots made in a temporary directory, with their own records.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
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
    ap.add_argument("--tiny", action="store_true",
                    help="scan two small synthetic snapshots instead of the corpus (CI; no mirrors needed)")
    args = ap.parse_args(argv)
    if args.tiny:
        with tempfile.TemporaryDirectory(prefix="gpu2tpu-scan-bench-") as tmp:
            args.projects_dir, args.mirror_root = tiny_corpus(Path(tmp))
            return run(args)
    return run(args)


TINY_FILES = {
    "train.py": """import argparse
import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast

from model import Net


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default={epochs})
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.DataParallel(Net()).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler()
    for _ in range(args.epochs):
        x = torch.randn(32, 16, device=device)
        with autocast():
            loss = model(x).square().mean()
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
""",
    "model.py": """import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, {width}), nn.ReLU(), nn.Linear({width}, 1))

    def forward(self, x):
        return self.body(x)
""",
    "requirements.txt": "torch\n",
    "README.md": "# tiny\n\n    python train.py --epochs 2\n",
}


def tiny_corpus(root: Path) -> tuple[Path, Path]:
    """Two synthetic projects, each a git snapshot laid out as `fetch` does (`<owner>+<name>`)
    with a record naming its commit: (projects dir, mirror root)."""
    projects, mirrors = root / "projects", root / "mirror"
    projects.mkdir()
    for i in range(2):
        repo = f"bench-owner/tiny-{i}"
        work = mirrors / repo.replace("/", "+")
        work.mkdir(parents=True)
        for name, text in TINY_FILES.items():
            (work / name).write_text(text.format(epochs=i + 1, width=8 * (i + 1)))
        git = ["git", "-C", str(work), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "tiny"], check=True)
        commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                                text=True).stdout.strip()
        (projects / f"{repo.replace('/', '__')}.yaml").write_text(f"repo: {repo}\ncommit: {commit}\n")
    return projects, mirrors


def run(args: argparse.Namespace) -> int:

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
    if not rows:
        print(f"no record scanned: no snapshot under {args.mirror_root} (--tiny needs none)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
