"""Leaderboard page weight and time to first render at scale.

    .venv/bin/python benchmarks/site_bench.py [--agents 200] [--tasks 160] [--attempts 5] [--tiny]

Builds a synthetic store (every agent x task x attempt, five criteria with evidence lines each),
writes the page with `build_site`, and prints: build time, index.html size (raw and gzip), the
details/ folder (total, median per agent), and in headless Chromium (Playwright, the distribution's
browser): first contentful paint, time until the page's script has drawn everything, and the time
to open one agent's drill-down. `--tiny` (CI, tests/test_benchmarks.py): 5 agents x 4 tasks x 2
attempts, every step (the browser's too) in a few seconds.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from leaderboard_bench import synthetic_batch  # noqa: E402

from gpu2tpu.leaderboard import prices  # noqa: E402
from gpu2tpu.leaderboard.schema import ROLLUP_TABLES, open_read_only, open_writable, rollup_select  # noqa: E402
from gpu2tpu.leaderboard.site import build_site  # noqa: E402

FULL = {"agents": 200, "tasks": 160, "attempts": 5}
TINY = {"agents": 5, "tasks": 4, "attempts": 2}

EVIDENCE_SQL = """
INSERT INTO evidence BY NAME
SELECT e.evaluation_id, c.criterion, s.seq,
    CASE c.criterion WHEN 'runs' THEN e.runs WHEN 'numerics' THEN e.numerics
        WHEN 'hardware' THEN e.hardware WHEN 'goal' THEN e.goal ELSE e.performance END AS passed,
    NOT (s.seq = 1 AND e.category IS NOT NULL) AS ok,
    c.criterion || ': step ' || (s.seq * 17) || ' measured ' || round(random(), 4)
        || ' against the reference band [' || round(random(), 4) || ', ' || round(1 + random(), 4)
        || '] (tolerance from 3 reference seeds)' AS text,
    CASE WHEN s.seq = 1 THEN e.category END AS category
FROM evaluations e
CROSS JOIN (SELECT unnest(['runs','numerics','hardware','goal','performance']) AS criterion) c
CROSS JOIN (SELECT unnest([0, 1]) AS seq) s
"""


def build_store(db: Path, agents: int, tasks: int, attempts: int) -> int:
    n = agents * tasks * attempts
    rng = np.random.default_rng(0)
    batch = synthetic_batch(rng, 0, n, agents, tasks)
    idx = np.arange(n)
    replace = {
        "agent": pa.array([f"agent-{a:03d}" for a in idx // (tasks * attempts)]),
        "model": pa.array([f"model-{a % 7}" for a in idx // (tasks * attempts)]),
        "task_id": pa.array([f"task-{t:03d}" for t in (idx // attempts) % tasks]),
        "attempt": pa.array((idx % attempts + 1).astype(np.int32)),
        "trust": pa.array(np.where(idx // (tasks * attempts) % 10 == 9, "self-reported", "verified")),
    }
    for name, col in replace.items():
        field = batch.schema.field(name)
        batch = batch.set_column(batch.schema.get_field_index(name), name, col.cast(field.type))
    con = open_writable(db)
    prices.sync_prices(con, prices.load_prices())
    con.register("_batch", batch)
    con.execute("INSERT INTO evaluations BY NAME SELECT * FROM _batch")
    con.execute(EVIDENCE_SQL)
    con.execute(
        "INSERT INTO submissions BY NAME SELECT DISTINCT submission_id, run_id, 'agent' AS agent, "
        "'Org' AS organisation, now() AS submitted_at, '0.1.0' AS harness_version, "
        "'bench' AS corpus_revision, 'h' AS predictions_hash, 1 AS n_evaluations, "
        "0 AS n_verdict_changed, '{}' AS metadata, 'verified' AS trust FROM _batch"
    )
    for table in ROLLUP_TABLES:
        con.execute(f"INSERT INTO {table} BY NAME {rollup_select(table)}")
    con.close()
    return n


def browser_times(index: Path, chromium: str) -> tuple[float, float, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(index.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_timeout(200)  # paint entries are queued after the frame
        fcp = page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1")
        ready = page.evaluate("performance.now()")
        t0 = time.perf_counter()
        page.click("#ranking tbody tr >> nth=0")
        page.wait_for_selector("#evals tbody tr")
        drill = (time.perf_counter() - t0) * 1000
        browser.close()
    return fcp, ready, drill


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int)
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--attempts", type=int)
    ap.add_argument("--chromium", default=os.environ.get("GPU2TPU_CHROMIUM") or shutil.which("chromium")
                    or "/usr/bin/chromium")
    ap.add_argument("--tiny", action="store_true",
                    help="5 agents x 4 tasks x 2 attempts (CI); explicit sizes still win")
    args = ap.parse_args()
    for name, value in (TINY if args.tiny else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-site-bench-") as tmp:
        db = Path(tmp) / "bench.duckdb"
        t0 = time.perf_counter()
        n = build_store(db, args.agents, args.tasks, args.attempts)
        print(f"store: {n:,} evaluations, {n * 10:,} evidence lines "
              f"({args.agents} agents x {args.tasks} tasks x {args.attempts} attempts) "
              f"in {time.perf_counter() - t0:.1f} s")
        con = open_read_only(db)
        t1 = time.perf_counter()
        index = build_site(con, Path(tmp) / "site")
        con.close()
        print(f"build_site: {time.perf_counter() - t1:.2f} s")
        raw = index.read_bytes()
        print(f"index.html: {len(raw) / 1e3:,.0f} kB raw, {len(gzip.compress(raw)) / 1e3:,.0f} kB gzip")
        chunks = sorted(p.stat().st_size for p in (index.parent / "details").iterdir())
        print(f"details/: {len(chunks)} files, {sum(chunks) / 1e6:,.1f} MB total, median "
              f"{statistics.median(chunks) / 1e3:,.0f} kB per agent (loaded only when opened)")
        if Path(args.chromium).exists():
            fcp, ready, drill = browser_times(index, args.chromium)
            print(f"chromium: first contentful paint {fcp:.0f} ms, everything drawn {ready:.0f} ms "
                  f"after navigation; one agent's drill-down {drill:.0f} ms")
        else:
            print(f"chromium: not found at {args.chromium}; browser timings skipped")


if __name__ == "__main__":
    main()
