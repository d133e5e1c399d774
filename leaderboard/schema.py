"""The DuckDB store: location, schema, and recorded migrations.

The store is a rebuildable artifact: run directories (reports + traces) are the source of truth.
Every migration is applied once, in order, inside a transaction, and recorded in `schema_version`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpu2tpu.judge.verdict import NOT_JUDGED
from gpu2tpu.leaderboard.criteria_sql import expand_criteria
from gpu2tpu.leaderboard.paths import DB_ENV, default_db_path
from gpu2tpu.leaderboard.store import StoreError, connect, explain, unwritable

# re-exported: the store's location lives in paths.py, opening it (locks, damage) in store.py
__all__ = ["DB_ENV", "StoreError", "default_db_path"]


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


_V1 = Migration(
    1,
    "submissions, evaluations, evidence, tasks, prices",
    (
        """CREATE TABLE submissions (
            submission_id VARCHAR PRIMARY KEY,      -- sha256 over the evaluations' content keys
            run_id VARCHAR NOT NULL,
            agent VARCHAR NOT NULL,
            model VARCHAR,
            organisation VARCHAR NOT NULL,
            submitted_at TIMESTAMPTZ NOT NULL,
            run_created_at TIMESTAMPTZ,
            harness_version VARCHAR NOT NULL,
            corpus_revision VARCHAR NOT NULL,
            predictions_hash VARCHAR NOT NULL,      -- sha256 over (task, attempt, prediction_hash)
            n_evaluations INTEGER NOT NULL,
            n_verdict_changed INTEGER NOT NULL,     -- report.json verdicts the regrade overturned
            metadata JSON NOT NULL,
            source_path VARCHAR
        )""",
        """CREATE TABLE evaluations (
            evaluation_id VARCHAR PRIMARY KEY,      -- content key: same evaluation, same id
            submission_id VARCHAR NOT NULL,
            run_id VARCHAR NOT NULL,
            agent VARCHAR NOT NULL,
            model VARCHAR,
            task_id VARCHAR NOT NULL,
            attempt INTEGER NOT NULL,
            task_hash VARCHAR,
            prediction_hash VARCHAR NOT NULL,
            report_path VARCHAR NOT NULL,
            created_at TIMESTAMPTZ,
            harness_version VARCHAR NOT NULL,
            corpus_revision VARCHAR NOT NULL,
            {criterion} BOOLEAN NOT NULL,
            migrated BOOLEAN NOT NULL,
            silent BOOLEAN NOT NULL,
            category VARCHAR,
            categories VARCHAR[] NOT NULL,
            reported_migrated BOOLEAN,              -- what report.json claimed (not trusted)
            reported_category VARCHAR,
            verdict_changed BOOLEAN NOT NULL,
            claimed_success BOOLEAN,
            human_interventions INTEGER,
            agent_cost_usd DOUBLE,
            input_tokens BIGINT,
            output_tokens BIGINT,
            agent_wall_time_s DOUBLE,
            exit_code INTEGER,
            timed_out BOOLEAN,
            target VARCHAR,
            chips INTEGER,
            chip_seconds DOUBLE,
            price_version VARCHAR,
            usd_per_chip_hour DOUBLE,
            execution_cost_usd DOUBLE,
            step_time_s DOUBLE,
            reference_step_time_s DOUBLE,
            compile_count INTEGER,
            reference_id VARCHAR,
            goal_metric VARCHAR,
            goal_value DOUBLE,
            runtime JSON
        )""",
        """CREATE TABLE evidence (
            evaluation_id VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            seq INTEGER NOT NULL,
            passed BOOLEAN NOT NULL,
            text VARCHAR NOT NULL,
            category VARCHAR
        )""",
        """CREATE TABLE tasks (
            task_id VARCHAR PRIMARY KEY,
            title VARCHAR,
            task_hash VARCHAR,
            target_chips INTEGER,
            precision_policy VARCHAR,
            steps INTEGER,
            source VARCHAR NOT NULL,                -- 'corpus' or 'report'
            updated_at TIMESTAMPTZ NOT NULL
        )""",
        """CREATE TABLE prices (
            price_version VARCHAR NOT NULL,
            accelerator VARCHAR NOT NULL,
            aliases VARCHAR[] NOT NULL,
            usd_per_chip_hour DOUBLE NOT NULL,
            pricing VARCHAR NOT NULL,
            region VARCHAR,
            source_url VARCHAR NOT NULL,
            retrieved_on DATE NOT NULL,
            note VARCHAR,
            PRIMARY KEY (price_version, accelerator)
        )""",
    ),
)

_V2 = Migration(
    2,
    "evaluations.verdict_diff (verdict fields the regrade changed), evidence.ok (per line)",
    (
        "ALTER TABLE evaluations ADD COLUMN verdict_diff VARCHAR[]",
        "ALTER TABLE evidence ADD COLUMN ok BOOLEAN",  # v1 rows: unknown (NULL)
        # Rows from v1 knew only whether the verdict changed; an empty list is exact for the rest.
        "UPDATE evaluations SET verdict_diff = [] WHERE NOT verdict_changed",
    ),
)

# Per agent, model and task: counts and sums the views need, so they read ~1 row per pair instead
# of every evaluation. Kept exact: ingest recomputes the pairs it touches in the same transaction.
ROLLUP_COLUMNS = """
    agent, model, task_id,
    count(*) AS evaluations,
    count(*) FILTER (WHERE NOT {scored}) AS infra,
    count(*) FILTER (WHERE {scored}) AS scored,
    count(*) FILTER (WHERE {scored} AND migrated) AS migrated,
    count(*) FILTER (WHERE {scored} AND {criterion}) AS {criterion},
    count(*) FILTER (WHERE {scored} AND {passed_before}NOT {criterion}) AS stop_{criterion},
    count(*) FILTER (WHERE {scored} AND NOT migrated) AS failures,
    count(*) FILTER (WHERE {scored} AND NOT migrated AND silent) AS silent_failures,
    count(*) FILTER (WHERE {scored} AND claimed_success IS NOT NULL) AS claim_known,
    count(*) FILTER (WHERE {scored} AND claimed_success) AS claimed,
    count(*) FILTER (WHERE {scored} AND claimed_success AND migrated) AS claimed_migrated,
    count(*) FILTER (WHERE {scored} AND NOT claimed_success AND migrated) AS underclaimed,
    count(*) FILTER (WHERE {scored} AND NOT claimed_success AND NOT migrated) AS admitted_failure,
    count(*) FILTER (WHERE {scored} AND claimed_success IS NOT NULL AND migrated)
        AS claim_known_migrated,
    count(*) FILTER (WHERE {scored} AND verdict_changed) AS verdict_changed,
    CAST(sum(human_interventions) FILTER (WHERE {scored}) AS BIGINT) AS interventions_sum,
    count(human_interventions) FILTER (WHERE {scored}) AS interventions_n,
    sum(agent_cost_usd) AS agent_cost_usd,
    sum(execution_cost_usd) AS execution_cost_usd,
    sum(chip_seconds) AS chip_seconds,
    list_sort(list_distinct(list(price_version))) AS price_versions
"""
# Scored: a verdict the grader could judge. `infra` counts the rest (harness failures, and runs the
# grader could not verify for missing evidence): neither is the agent's result, neither is ranked.
NOT_JUDGED_SQL = ", ".join(repr(c) for c in NOT_JUDGED)  # the SQL list, `{not_judged}` in views
SCORED = f"coalesce(category NOT IN ({NOT_JUDGED_SQL}), true)"
ROLLUP_COLUMNS = expand_criteria(ROLLUP_COLUMNS.replace("{scored}", SCORED))

ROLLUP_TABLES = ("agent_task_stats", "agent_stats", "agent_category_stats")


def rollup_select(table: str, src: str = "evaluations", trust: bool = True) -> str:
    """The query that computes rollup `table` from the evaluations in relation `src`. Since v4
    every rollup is also keyed by `trust`, so verified and self-reported results never mix."""
    key = "agent, model, trust" if trust else "agent, model"
    if table == "agent_task_stats":
        return f"SELECT {'trust, ' if trust else ''}{ROLLUP_COLUMNS} FROM {src} GROUP BY {key}, task_id"
    if table == "agent_stats":
        return (
            f"SELECT {key}, median(reference_step_time_s / step_time_s) FILTER (WHERE "
            f"step_time_s > 0 AND reference_step_time_s > 0 AND {SCORED})"
            f" AS median_speed_ratio FROM {src} GROUP BY {key}"
        )
    if table == "agent_category_stats":  # `decided`: first category; `occurred`: any category
        return (
            f"SELECT {key}, category, sum(decided)::BIGINT AS decided, "
            "sum(silent)::BIGINT AS silent, sum(occurred)::BIGINT AS occurred FROM ("
            f"SELECT {key}, category, 1 AS decided, silent::INT AS silent, 0 AS occurred "
            f"FROM {src} WHERE NOT migrated UNION ALL "
            f"SELECT {key}, unnest(categories) AS category, 0, 0, 1 "
            f"FROM {src} WHERE NOT migrated) GROUP BY {key}, category"
        )
    raise KeyError(table)


_V3 = Migration(
    3,
    "rollups agent_task_stats, agent_stats, agent_category_stats, maintained at ingest",
    tuple(
        statement
        for table in ROLLUP_TABLES
        for statement in (
            f"CREATE TABLE {table} AS {rollup_select(table, trust=False)} LIMIT 0",
            f"INSERT INTO {table} {rollup_select(table, trust=False)}",
        )
    ),
)

_V4 = Migration(
    4,
    "trust: verified (re-executed by the maintainers) or self-reported; published reference "
    "hashes; rollups keyed by trust so the two never mix",
    (
        # Rows stored before v4 were graded from the submitter's own files: self-reported.
        "ALTER TABLE evaluations ADD COLUMN trust VARCHAR DEFAULT 'self-reported'",
        "ALTER TABLE submissions ADD COLUMN trust VARCHAR DEFAULT 'self-reported'",
        "UPDATE submissions SET source_path = NULL",  # never publish a local path
        # 'maintainer' (verified), 'published' (matched the published hashes), 'unpublished'
        "ALTER TABLE evaluations ADD COLUMN reference_status VARCHAR",
        """CREATE TABLE reference_files (
            reference_id VARCHAR NOT NULL,
            path VARCHAR NOT NULL,                  -- relative to references/<reference_id>/
            sha256 VARCHAR NOT NULL,
            published_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (reference_id, path)
        )""",
        *(f"DROP TABLE {t}" for t in ROLLUP_TABLES),
        *(f"CREATE TABLE {t} AS {rollup_select(t)}" for t in ROLLUP_TABLES),
    ),
)

_V5 = Migration(
    5,
    "evidence.source (in-process, supervisor, static-scan); evaluations.evidence_absent (evidence "
    "files a run lacks because its harness predates them)",
    (
        "ALTER TABLE evidence ADD COLUMN source VARCHAR",  # earlier rows: not stored (NULL)
        "ALTER TABLE evaluations ADD COLUMN evidence_absent VARCHAR[]",  # earlier rows: unknown
    ),
)

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, _V4, _V5)
CURRENT_VERSION = MIGRATIONS[-1].version


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """Highest applied migration (0 for an empty database)."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
    ).fetchall()
    if not exists[0][0]:
        return 0
    row = con.execute("SELECT max(version) FROM schema_version").fetchall()
    return int(row[0][0]) if row[0][0] is not None else 0


def migrate(
    con: duckdb.DuckDBPyConnection,
    target: int = CURRENT_VERSION,
    on_applied: Callable[[Migration], None] | None = None,
) -> list[int]:
    """Apply pending migrations up to `target`, each in one transaction; return those applied."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
        "description VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    current = schema_version(con)
    if current > CURRENT_VERSION:
        raise StoreError(
            f"store is at schema v{current}, newer than this gpu2tpu (v{CURRENT_VERSION}); upgrade"
        )
    applied = []
    for migration in MIGRATIONS:
        if migration.version <= current or migration.version > target:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in migration.statements:
                con.execute(expand_criteria(statement))
            con.execute(
                "INSERT INTO schema_version (version, description) VALUES ($v, $d)",
                {"v": migration.version, "d": migration.description},
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(migration.version)
        if on_applied:
            on_applied(migration)
    return applied


def open_writable(path: Path) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the store for writing and bring it to the current schema. Waits
    for other processes' locks (store.connect); refuses a damaged or unwritable file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unwritable(path, exc) from None
    con = connect(path, read_only=False)
    try:
        migrate(con)
    except duckdb.Error as exc:
        con.close()
        raise explain(exc, path, writing=True) from None
    except BaseException:
        con.close()
        raise
    return con


def open_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """Open the store read-only; it must exist, be whole, and be at the current schema version.
    Waits (bounded) while a writer holds it (store.connect)."""
    if not path.exists():
        raise StoreError(
            f"no leaderboard store at {path}; submit a run first (gpu2tpu submit RUN_DIR "
            "--metadata FILE), or pass --db PATH (or set $GPU2TPU_DB) or --from EXPORT_DIR"
        )
    con = connect(path, read_only=True)
    try:
        version = schema_version(con)
    except duckdb.Error as exc:
        con.close()
        raise explain(exc, path) from None
    if version != CURRENT_VERSION:
        con.close()
        raise StoreError(
            f"store {path} is at schema v{version}, this gpu2tpu reads v{CURRENT_VERSION}; "
            f"run `gpu2tpu leaderboard migrate --db {path}`"
        )
    return con
