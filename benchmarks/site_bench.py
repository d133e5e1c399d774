"""Leaderboard page weight and time to first render at scale.

    .venv/bin/python benchmarks/site_bench.py [--agents 200] [--tasks 160] [--attempts 5] [--tiny]

Builds a synthetic store (every agent x task x attempt, five criteria with evidence lines each),
writes the page with `build_site`, and prints: build time, index.html size (raw and gzip), the
details/ folder (one agent's file gzipped, median and max, the shared strings.js, the folder's
total), and in headless Chromium (Playwright, the distribution's browser): first contentful paint,
time until the page's script has drawn everything, and the time to open one agent's drill-down.
Then the goals (issue 24) and whether each holds; below the full size the sizes are extrapolated
linearly to it and labelled so. Evaluation ids are random hex, as real sha256 ids are.
`--tiny` (CI, tests/test_benchmarks.py): 5 agents x 4 tasks x 2 attempts, every step (the
browser's too) in a few seconds.
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
GOAL_AGENT_KB = 200  # one agent's drill-down (strings.js + a<N>.js), gzipped
GOAL_FOLDER_MB = 50  # details/ at the full size, as written
GOAL_PAINT_MS = 1000  # first contentful paint

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
        "evaluation_id": pa.array([rng.bytes(32).hex() for _ in range(n)]),  # as random as sha256
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
        sizes = details_sizes(index.parent / "details")
        fcp = None
        if Path(args.chromium).exists():
            fcp, ready, drill = browser_times(index, args.chromium)
            print(f"chromium: first contentful paint {fcp:.0f} ms, everything drawn {ready:.0f} ms "
                  f"after navigation; one agent's drill-down {drill:.0f} ms")
        else:
            print(f"chromium: not found at {args.chromium}; browser timings skipped")
        print_goals(sizes, fcp, args.agents, args.tasks, args.attempts)


def details_sizes(details: Path) -> dict[str, float]:
    """details/ in kB: each agent's file gzipped (median, max), strings.js, the folder's total."""
    agents = [p for p in details.iterdir() if p.name != "strings.js"]
    gz = sorted(len(gzip.compress(p.read_bytes())) / 1e3 for p in agents)
    raw = sorted(p.stat().st_size / 1e3 for p in agents)
    strings = (details / "strings.js").read_bytes()
    total = sum(p.stat().st_size for p in details.iterdir()) / 1e3
    total_gz = sum(gz) + len(gzip.compress(strings)) / 1e3
    out = {"median": statistics.median(gz), "max": gz[-1], "raw_median": statistics.median(raw),
           "strings": len(gzip.compress(strings)) / 1e3, "strings_raw": len(strings) / 1e3,
           "total": total, "total_gz": total_gz, "files": len(agents)}
    print(f"details/: {len(agents)} agent files, gzip median {out['median']:,.1f} kB, max "
          f"{out['max']:,.1f} kB per agent (raw median {out['raw_median']:,.1f} kB); strings.js "
          f"{out['strings_raw']:,.1f} kB raw, {out['strings']:,.1f} kB gzip; folder "
          f"{total:,.1f} kB raw, {total_gz:,.1f} kB gzip")
    return out


def print_goals(sizes: dict[str, float], fcp: float | None, agents: int, tasks: int,
                attempts: int) -> None:
    """Each goal, the figure at the full size (extrapolated linearly when run smaller), held or not."""
    full = (agents, tasks, attempts) == (FULL["agents"], FULL["tasks"], FULL["attempts"])
    per_agent = FULL["tasks"] * FULL["attempts"] / (tasks * attempts)  # runs per agent, scaled
    folder = per_agent * FULL["agents"] / agents
    how = "measured" if full else (f"extrapolated linearly from {agents} x {tasks} x {attempts} "
                                   f"to {FULL['agents']} x {FULL['tasks']} x {FULL['attempts']}")
    # the first drill-down loads strings.js and one agent's file; strings.js is read once
    agent_kb = (sizes["max"] + sizes["strings"]) * (1 if full else per_agent)
    folder_mb = sizes["total"] / 1e3 * (1 if full else folder)
    held = {True: "holds", False: "MISSED"}
    print(f"goal: one agent's details (a<N>.js max + strings.js) <= {GOAL_AGENT_KB} kB gzip: "
          f"{agent_kb:,.1f} kB ({how}): {held[agent_kb <= GOAL_AGENT_KB]}")
    print(f"goal: details/ <= {GOAL_FOLDER_MB} MB: {folder_mb:,.2f} MB ({how}): "
          f"{held[folder_mb <= GOAL_FOLDER_MB]}")
    if fcp is None:
        print(f"goal: first contentful paint < {GOAL_PAINT_MS} ms: not measured (no Chromium)")
    else:
        print(f"goal: first contentful paint < {GOAL_PAINT_MS} ms: {fcp:.0f} ms "
              f"({'measured' if full else f'measured at {agents} x {tasks} x {attempts}'}): "
              f"{held[fcp < GOAL_PAINT_MS]}")


if __name__ == "__main__":
    main()
