"""Export the store as parquet + manifest.json, publish it to the Hub, and read an export back.

Layout of an export directory:
    manifest.json            schema_version, harness version, corpus revision, row counts, sha256
    README.md                Hub dataset card (one config per table)
    tables/<table>.parquet   the store's tables (the leaderboard views are recomputed from them)
    views/<view>.parquet     the five leaderboard views as computed at export time
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast

import duckdb
import pyarrow.parquet as pq

from gpu2tpu.leaderboard.outdir import write_whole
from gpu2tpu.leaderboard.queries import VIEWS, view_filters, view_sql
from gpu2tpu.leaderboard.schema import CURRENT_VERSION
from gpu2tpu.record.report import hash_file

TABLES = (
    "schema_version",
    "submissions",
    "evaluations",
    "evidence",
    "tasks",
    "prices",
    "reference_files",
    "agent_task_stats",
    "agent_stats",
    "agent_category_stats",
)
MANIFEST = "manifest.json"
FORMAT = "gpu2tpu-leaderboard-export"
_ORDER = {
    "schema_version": "version",
    "submissions": "submitted_at, submission_id",
    "evaluations": "agent, model, task_id, attempt, evaluation_id",
    "evidence": "evaluation_id, criterion, seq",
    "tasks": "task_id",
    "prices": "price_version, accelerator",
    "reference_files": "reference_id, path",
    "agent_task_stats": "agent, model, task_id",
    "agent_stats": "agent, model",
    "agent_category_stats": "agent, model, category",
}


class ExportError(Exception):
    """An export directory is missing, incomplete, or does not match its manifest."""


OWNED = (MANIFEST, "README.md", "tables", "views")  # what an export writes in its folder


def export_store(con: duckdb.DuckDBPyConnection, to_dir: Path) -> dict[str, Any]:
    """Write every table and view as parquet plus a manifest; return the manifest. The folder is
    written beside `to_dir` and renamed into place: a failure leaves the earlier export (or none),
    never part of one (outdir.write_whole)."""
    return write_whole(to_dir, OWNED, lambda stage: _export(con, stage))


def _export(con: duckdb.DuckDBPyConnection, to_dir: Path) -> dict[str, Any]:
    import gpu2tpu.corpus as corpus
    from gpu2tpu import __version__

    (to_dir / "tables").mkdir(parents=True, exist_ok=True)
    (to_dir / "views").mkdir(parents=True, exist_ok=True)
    entries: dict[str, dict[str, Any]] = {}
    for table in TABLES:
        rel = f"tables/{table}.parquet"
        arrow = con.sql(f"SELECT * FROM {table} ORDER BY {_ORDER[table]}").to_arrow_table()
        pq.write_table(arrow, to_dir / rel)
        entries[table] = {"path": rel, "rows": arrow.num_rows, "sha256": hash_file(to_dir / rel)}
    views: dict[str, dict[str, Any]] = {}
    for view in VIEWS:
        rel = f"views/{view}.parquet"
        sql = view_sql(view)
        params = view_filters(view, {})
        arrow = con.sql(sql, params=params).to_arrow_table()
        pq.write_table(arrow, to_dir / rel)
        views[view] = {"path": rel, "rows": arrow.num_rows, "sha256": hash_file(to_dir / rel)}

    def distinct(table: str, column: str) -> list[str]:
        rows = con.execute(f"SELECT DISTINCT {column} FROM {table} ORDER BY 1").fetchall()
        return [str(r[0]) for r in rows if r[0] is not None]

    manifest = {
        "format": FORMAT,
        "schema_version": CURRENT_VERSION,
        "harness_version": __version__,
        "corpus_revision": corpus.revision(),
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "harness_versions": distinct("submissions", "harness_version"),
        "corpus_revisions": distinct("submissions", "corpus_revision"),
        "price_versions": distinct("prices", "price_version"),
        "tables": entries,
        "views": views,
    }
    (to_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    (to_dir / "README.md").write_text(_dataset_card(manifest))
    return manifest


def open_export(source: str, download: Callable[..., str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding an export's tables (read with read_parquet), files verified.

    `source` is a local directory or `hf://datasets/OWNER/NAME[@REVISION]` (downloaded with
    huggingface_hub.snapshot_download, or `download`, a function with the same signature).
    """
    directory = _local_export(source, download)
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        raise ExportError(f"{source} has no {MANIFEST}; is it a `gpu2tpu leaderboard export`?")
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format") != FORMAT:
        raise ExportError(f"{manifest_path} is not a gpu2tpu leaderboard export manifest")
    if manifest.get("schema_version") != CURRENT_VERSION:
        raise ExportError(
            f"{source} is at schema v{manifest.get('schema_version')}; this gpu2tpu reads "
            f"v{CURRENT_VERSION}. Re-export it with a matching gpu2tpu"
        )
    con = duckdb.connect()
    for table in TABLES:
        entry = (manifest.get("tables") or {}).get(table)
        if not entry:
            raise ExportError(f"{manifest_path} lists no table {table}")
        path = directory / entry["path"]
        if not path.is_file():
            raise ExportError(f"{source}: {entry['path']} is missing")
        if hash_file(path) != entry["sha256"]:
            raise ExportError(f"{source}: {entry['path']} does not match its manifest sha256")
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet($path)", {"path": str(path)})
    con.execute("SET enable_external_access = false")  # nothing else is read or written
    return con


def _local_export(source: str, download: Callable[..., str] | None) -> Path:
    if not source.startswith("hf://"):
        directory = Path(source).expanduser()
        if not directory.is_dir():
            raise ExportError(f"export directory {source} does not exist")
        return directory
    repo = source[len("hf://") :]
    if repo.startswith("datasets/"):
        repo = repo[len("datasets/") :]
    repo, _, revision = repo.partition("@")
    if repo.count("/") != 1:
        raise ExportError(f"{source}: expected hf://datasets/OWNER/NAME[@REVISION]")
    if download is None:
        from huggingface_hub import snapshot_download

        download = snapshot_download
    path = download(
        repo_id=repo,
        repo_type="dataset",
        revision=revision or None,
        allow_patterns=[MANIFEST, "tables/*.parquet"],
    )
    return Path(path)


class HubApi(Protocol):
    """The part of huggingface_hub.HfApi that publishing uses."""

    def create_repo(self, repo_id: str, **kwargs: Any) -> Any: ...

    def upload_folder(self, **kwargs: Any) -> Any: ...


def publish(export_dir: Path, repo_id: str, api: HubApi | None = None, private: bool = False):
    """Upload an export directory to the Hub dataset `repo_id` (created if needed)."""
    manifest = json.loads((export_dir / MANIFEST).read_text())
    if api is None:
        from huggingface_hub import HfApi

        api = cast(HubApi, HfApi())
    api.create_repo(repo_id=repo_id, repo_type="dataset", exist_ok=True, private=private)
    counts = ", ".join(f"{k} {v['rows']}" for k, v in manifest["tables"].items())
    return api.upload_folder(
        repo_id=repo_id,
        repo_type="dataset",
        folder_path=str(export_dir),
        commit_message=f"gpu2tpu leaderboard export {manifest['created_at']} ({counts})",
    )


def _dataset_card(manifest: dict[str, Any]) -> str:
    configs = "\n".join(
        f"- config_name: {name}\n  data_files: {entry['path']}"
        for name, entry in {**manifest["views"], **manifest["tables"]}.items()
    )
    rows = "\n".join(f"| {k} | {v['rows']} |" for k, v in manifest["tables"].items())
    return (
        f"---\nconfigs:\n{configs}\n---\n\n# gpu2tpu leaderboard\n\n"
        "Results of coding agents migrating PyTorch projects from NVIDIA GPUs to TPUs, re-scored "
        "from saved traces by the gpu2tpu harness. `views/` holds the leaderboard tables, "
        "`tables/` the store they are computed from; `manifest.json` lists sha256 and row "
        "counts.\n\n"
        f"schema_version {manifest['schema_version']}, harness {manifest['harness_version']}, "
        f"corpus revision {manifest['corpus_revision']}, exported {manifest['created_at']}.\n\n"
        f"| table | rows |\n|---|---|\n{rows}\n"
    )
