"""Leaderboard store benchmark: bulk-load N synthetic evaluations through Arrow, time every view.

    .venv/bin/python benchmarks/leaderboard_bench.py [--rows 1000000] [--db PATH] [--repeat 5] [--tiny]

Prints the ingest rate (rows/s, one transaction, Arrow batches into DuckDB) and, on a read-only
connection, the latency of each leaderboard view (first run and median of --repeat; goal < 200 ms),
then the export and one incremental submit (`ingest._write`, as `gpu2tpu submit` calls it).
`--tiny` (CI, tests/test_benchmarks.py): 2,000 rows, 20 agents, 10 tasks, one repeat; every step runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from gpu2tpu.leaderboard import prices
from gpu2tpu.leaderboard.export import export_store, open_export
from gpu2tpu.leaderboard.queries import VIEWS, run_view
from gpu2tpu.leaderboard.rows import CRITERIA, SCHEMAS, to_arrow
from gpu2tpu.leaderboard.schema import ROLLUP_TABLES, open_read_only, open_writable, rollup_select

FULL = {"rows": 1_000_000, "batch": 100_000, "agents": 200, "tasks": 500, "repeat": 5}
TINY = {"rows": 2_000, "batch": 1_000, "agents": 20, "tasks": 10, "repeat": 1}

CATEGORIES = np.array(
    [
        "crash",
        "timeout",
        "wrong_device",
        "cpu_fallback",
        "chips_unused",
        "recompilation",
        "host_sync",
        "numerics_drift",
        "config_drift",
        "workload_changed",
        "goal_regressed",
        "slow",
        "patch_rejected",
        "infra",
    ]
)


def synthetic_batch(rng: np.random.Generator, start: int, n: int, agents: int, tasks: int):
    """`n` evaluation rows with plausible correlations (criteria fail in grading order)."""
    idx = np.arange(start, start + n)
    agent = rng.integers(0, agents, n)
    skill = (agent % 10) / 12.0 + 0.1  # some agents are better than others
    passes = {}
    alive = np.ones(n, dtype=bool)
    for c in CRITERIA:
        passes[c] = alive & (rng.random(n) < 0.55 + 0.4 * skill)
        alive = passes[c]
    migrated = alive
    drawn = CATEGORIES[rng.integers(0, len(CATEGORIES), n)]
    category = [None if ok else str(c) for ok, c in zip(migrated, drawn, strict=True)]
    cats = [[c] if c is not None else [] for c in category]
    exit0 = passes["runs"] | (rng.random(n) < 0.3)
    claimed = rng.random(n) < 0.8
    step = rng.uniform(0.005, 0.05, n)
    chip_s = rng.uniform(10, 3600, n)
    usd = np.where(agent % 3 == 0, 1.20, np.where(agent % 3 == 1, 2.70, 4.20))
    cols = {
        "evaluation_id": [f"{i:064x}" for i in idx],
        "submission_id": [f"sub-{i // 1000}" for i in idx],
        "run_id": [f"run-{i // 1000}" for i in idx],
        "agent": [f"agent-{a:03d}" for a in agent],
        "model": [f"model-{a % 7}" for a in agent],
        "task_id": [f"task-{t:04d}" for t in rng.integers(0, tasks, n)],
        "attempt": (idx % 3 + 1).astype(np.int32),
        "prediction_hash": [f"{i:064x}" for i in idx],
        "report_path": [f"agent/task/{i}/report.json" for i in idx],
        "created_at": pa.array(
            np.full(n, np.datetime64("2026-12-02T16:00:00", "us")), pa.timestamp("us")
        ).cast(pa.timestamp("us", tz="UTC")),
        "harness_version": ["0.1.0"] * n,
        "corpus_revision": ["bench"] * n,
        **{c: passes[c] for c in CRITERIA},
        "migrated": migrated,
        "silent": ~migrated & exit0,
        "category": category,
        "categories": cats,
        "verdict_changed": rng.random(n) < 0.01,
        "verdict_diff": [[] for _ in range(n)],
        "claimed_success": claimed,
        "human_interventions": rng.integers(0, 3, n).astype(np.int32),
        "agent_cost_usd": rng.uniform(0.01, 5.0, n),
        "input_tokens": rng.integers(1_000, 2_000_000, n),
        "output_tokens": rng.integers(100, 200_000, n),
        "target": ["tpu-v5e"] * n,
        "chips": np.ones(n, dtype=np.int32),
        "chip_seconds": chip_s,
        "price_version": ["2026-12-02"] * n,
        "usd_per_chip_hour": usd,
        "execution_cost_usd": chip_s / 3600 * usd,
        "step_time_s": step,
        "reference_step_time_s": step * rng.uniform(0.5, 2.0, n),
        "compile_count": rng.integers(1, 20, n).astype(np.int32),
        "trust": ["verified"] * n,
    }
    schema = SCHEMAS["evaluations"]
    arrays = [pa.array(cols[f.name], f.type) if f.name in cols else pa.nulls(n, f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--agents", type=int)
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--db", type=Path, help="store file (default: a temporary directory)")
    ap.add_argument("--tiny", action="store_true",
                    help="a few seconds' run of every step (CI); explicit sizes still win")
    args = ap.parse_args()
    for name, value in (TINY if args.tiny else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-bench-") as tmp:
        db = args.db or Path(tmp) / "bench.duckdb"
        rng = np.random.default_rng(0)
        gen_s = 0.0
        con = open_writable(db)
        prices.sync_prices(con, prices.load_prices())
        t0 = time.perf_counter()
        con.execute("BEGIN TRANSACTION")
        for start in range(0, args.rows, args.batch):
            g0 = time.perf_counter()
            batch = synthetic_batch(rng, start, min(args.batch, args.rows - start), args.agents, args.tasks)
            gen_s += time.perf_counter() - g0
            con.register("_batch", batch)
            con.execute("INSERT INTO evaluations BY NAME SELECT * FROM _batch")
            con.unregister("_batch")
        subs = con.sql("SELECT DISTINCT submission_id, run_id FROM evaluations").to_arrow_table()
        con.register("_subs", subs)
        con.execute(
            "INSERT INTO submissions BY NAME SELECT submission_id, run_id, 'agent' AS agent, "
            "'Org' AS organisation, now() AS submitted_at, '0.1.0' AS harness_version, "
            "'bench' AS corpus_revision, 'h' AS predictions_hash, 1000 AS n_evaluations, "
            "0 AS n_verdict_changed, '{}' AS metadata, 'verified' AS trust FROM _subs"
        )
        r0 = time.perf_counter()
        for table in ROLLUP_TABLES:
            con.execute(f"INSERT INTO {table} BY NAME {rollup_select(table)}")
        rollup_s = time.perf_counter() - r0
        con.execute("COMMIT")
        total_s = time.perf_counter() - t0
        load_s = total_s - gen_s
        tasks = to_arrow(
            "tasks",
            [
                {"task_id": f"task-{t:04d}", "source": "corpus", "updated_at": time_now()}
                for t in range(args.tasks)
            ],
        )
        con.register("_tasks", tasks)
        con.execute("INSERT INTO tasks BY NAME SELECT * FROM _tasks")
        con.close()
        size_mb = db.stat().st_size / 1e6
        print(
            f"rows: {args.rows:,} evaluations  ({args.agents} agents, {args.tasks} tasks), "
            f"store {size_mb:.0f} MB"
        )
        print(
            f"ingest: {args.rows / load_s:,.0f} rows/s into DuckDB via Arrow "
            f"({load_s:.2f} s load incl. {rollup_s:.2f} s rollups, one "
            f"transaction; + {gen_s:.2f} s synthetic generation)"
        )
        ro = open_read_only(db)
        worst = 0.0
        for view in VIEWS:
            times = []
            for _ in range(args.repeat + 1):
                s = time.perf_counter()
                result = run_view(ro, view)
                times.append((time.perf_counter() - s) * 1000)
            med = statistics.median(times[1:])
            worst = max(worst, med)
            print(
                f"view {view:<12} first {times[0]:7.1f} ms  median {med:7.1f} ms  "
                f"({len(result.rows)} rows)  {'ok' if med < 200 else 'OVER 200 ms'}"
            )
        print(f"slowest view median: {worst:.1f} ms (goal < 200 ms)")
        e0 = time.perf_counter()
        manifest = export_store(ro, Path(tmp) / "export")
        e1 = time.perf_counter()
        ro.close()
        exported = open_export(str(Path(tmp) / "export"))
        e2 = time.perf_counter()
        s0 = time.perf_counter()
        run_view(exported, "agents")
        print(
            f"export: {e1 - e0:.2f} s ({manifest['tables']['evaluations']['rows']:,} rows to "
            f"parquet); --from load {e2 - e1:.2f} s; agents view from export "
            f"{(time.perf_counter() - s0) * 1000:.1f} ms"
        )
        exported.close()
        inc_ms, evidence = incremental_submit_ms(db, rng, args)
        print(
            f"incremental submit of 50 evaluations ({evidence} evidence lines) into the "
            f"{args.rows:,}-row store: {inc_ms:.0f} ms (insert + rollups + tasks + prices + commit)"
        )


def incremental_submit_ms(db: Path, rng: np.random.Generator, args: argparse.Namespace) -> tuple[float, int]:
    """Time the transactional part of `gpu2tpu submit` (ingest._write) for one small run: one
    agent's batch of 50 evaluations, ten evidence lines each (two per criterion), as `_batch`
    builds them. Returns (milliseconds, evidence lines)."""
    import datetime as dt

    from gpu2tpu.leaderboard import ingest

    now = dt.datetime.now(dt.timezone.utc)
    rows = synthetic_batch(rng, args.rows + 1, 50, args.agents, args.tasks).to_pylist()
    evidence = []
    for i, row in enumerate(rows):  # one submission is one agent's run
        row.update(evaluation_id=f"incremental-{args.rows}-{i}", agent="agent-001", model="model-1",
                   reference_status="maintainer")
        for criterion in CRITERIA:
            for seq in range(2):
                ok = row[criterion] or seq == 0
                evidence.append({
                    "evaluation_id": row["evaluation_id"], "criterion": criterion, "seq": seq,
                    "passed": row[criterion], "ok": ok,
                    "text": f"{criterion}: step {seq * 17} measured {rng.random():.4f} against the "
                            "reference band [0.1, 1.1] (tolerance from 3 reference seeds)",
                    "category": None if ok else row["category"],
                })
    submission = {
        "submission_id": f"incremental-{args.rows}",
        "run_id": "incremental",
        "agent": "agent-001",
        "model": "model-1",
        "organisation": "Org",
        "submitted_at": now,
        "run_created_at": now,
        "harness_version": "0.1.0",
        "corpus_revision": "bench",
        "predictions_hash": "h",
        "n_evaluations": 0,
        "n_verdict_changed": 0,
        "metadata": "{}",
        "source_path": None,
        "trust": "verified",
    }
    batch = ingest._Batch(submission, rows, evidence)
    price_list = prices.load_prices()
    con = open_writable(db)
    start = time.perf_counter()
    result = ingest._write(con, db, [batch], price_list, [], now, publish=[])
    elapsed = (time.perf_counter() - start) * 1000
    con.close()
    assert result.inserted == len(rows), result.message()
    return elapsed, len(evidence)


def time_now():
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc)


if __name__ == "__main__":
    main()
