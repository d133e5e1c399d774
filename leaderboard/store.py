"""Opening the store file: waiting for its lock, refusing a damaged file, naming what to change.

DuckDB lets one process write a file, or any number read it, and refuses the rest at once. Every
gpu2tpu command waits instead, for at most `$GPU2TPU_DB_WAIT` seconds (default 60), says so on
stderr when it starts waiting, and then gives up with one line: a submit queues behind a reader
or another submit, and a reader never waits on a writer longer than that bound.

Before anything is queried (or written), the file is checked with DuckDB's own view of it: it
must open, and every block its catalog uses (`pragma_metadata_info`, `pragma_storage_info`) must
lie inside the file, which must be DuckDB's header plus whole blocks (`pragma_database_size`).
A damaged block that is still there is caught by DuckDB's checksum when it is read; that error,
too, becomes one line (StoreDamaged) and nothing is printed or written from the query.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from gpu2tpu.leaderboard.paths import DB_ENV, why_unwritable

WAIT_ENV = "GPU2TPU_DB_WAIT"
DEFAULT_WAIT_S = 60.0
HEADER_BYTES = 3 * 4096  # DuckDB's main header and its two database headers precede the blocks
_MOVE = f"--db PATH or ${DB_ENV}"
_LOCKED = re.compile(r"could not set lock", re.IGNORECASE)
_PID = re.compile(r"\(PID (\d+)\)")
_DAMAGE = re.compile(r"not a valid DuckDB database|could not read enough bytes|corrupt|checksum|"
                     r"serializ|invalid block|failed to read|invalidated", re.IGNORECASE)


class StoreError(Exception):
    """The store cannot be used as asked (missing, locked, damaged, unwritable, another schema);
    the message is one line that names the file and what to do."""


class StoreBusy(StoreError):
    """Another process held the store's lock for longer than the wait allows."""


class StoreDamaged(StoreError):
    """The file is not a whole DuckDB store: it is never queried."""


class StoreUnwritable(StoreError):
    """The store (or its folder) cannot be created or written where it is asked to be."""


def damaged(path: Path, detail: str) -> StoreDamaged:
    return StoreDamaged(
        f"the leaderboard store {path} is damaged ({detail}); nothing was read from it: restore "
        "it from a backup, or rebuild it from the run directories (move it aside, then gpu2tpu "
        "submit RUN_DIR --metadata FILE for each run)"
    )


def unwritable(path: Path, exc: OSError | str, writing: bool = True) -> StoreUnwritable:
    why = exc if isinstance(exc, str) else why_unwritable(path, exc)
    if not writing:
        return StoreUnwritable(f"cannot read the leaderboard store {path}: {why}; point to "
                               f"another store with {_MOVE}")
    return StoreUnwritable(
        f"cannot write the leaderboard store {path}: {why}; put it somewhere writable with {_MOVE}"
    )


def explain(exc: duckdb.Error, path: Path, writing: bool = False) -> StoreError:
    """One line for an error DuckDB raised while opening, checking or using the store at `path`."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if _DAMAGE.search(text):
        return damaged(path, _short(text))
    if re.search(r"read-only file system|permission denied|cannot open file|no space", text, re.I):
        return unwritable(path, _short(text), writing)
    return StoreError(f"cannot use the leaderboard store {path}: {_short(text)}")


def wait_limit() -> float:
    """Seconds to wait for another process's lock: `$GPU2TPU_DB_WAIT`, else 60."""
    raw = os.environ.get(WAIT_ENV, "").strip()
    if not raw:
        return DEFAULT_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        raise StoreError(f"${WAIT_ENV}={raw!r}: give the seconds to wait for the store, e.g. 60") from None
    if not value >= 0 or value == float("inf"):
        raise StoreError(f"${WAIT_ENV}={raw!r}: give a number of seconds, 0 or more")
    return value


def _announce(message: str) -> None:
    print(f"gpu2tpu: {message}", file=sys.stderr, flush=True)


def connect(
    path: Path,
    read_only: bool,
    wait_s: float | None = None,
    announce: Callable[[str], None] = _announce,
) -> duckdb.DuckDBPyConnection:
    """Open `path`, waiting up to `wait_s` (default wait_limit()) while another process holds a
    conflicting lock; said once through `announce`. The file is checked before it is returned."""
    limit = wait_limit() if wait_s is None else wait_s
    existed = path.exists()
    if existed and path.is_dir():
        raise StoreError(f"the leaderboard store {path} is a folder, not a file; name the store "
                         f"file with {_MOVE}")
    if existed and path.stat().st_size == 0:
        raise damaged(path, "the file is empty")
    deadline = time.monotonic() + limit
    delay, said = 0.05, False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as exc:
            if not _LOCKED.search(str(exc)):
                raise explain(exc, path, writing=not read_only) from None
            holder = _holder(exc)
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreBusy(
                    f"the leaderboard store {path} is still in use by {holder} after {limit:g} s; "
                    f"run this again when it has finished, or wait longer with {WAIT_ENV}=SECONDS"
                ) from None
            if not said:
                announce(f"waiting for the leaderboard store {path}, held by {holder}; "
                         f"up to {limit:g} s (${WAIT_ENV})")
                said = True
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.5)
        except duckdb.Error as exc:
            raise explain(exc, path, writing=not read_only) from None
    if existed:
        try:
            check_intact(con, path)
        except BaseException:
            con.close()
            raise
    return con


def check_writable(path: Path) -> None:
    """Raise StoreError now if a later write to the store at `path` would fail: an existing
    store must open for writing and be whole; a new one's folder must take a file."""
    if path.exists():
        connect(path, read_only=False).close()
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        raise unwritable(path, exc) from None


def _holder(exc: Exception) -> str:
    pid = _PID.search(str(exc))
    return f"another gpu2tpu or DuckDB process (PID {pid.group(1)})" if pid else "another process"


def check_intact(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Raise StoreDamaged unless every block DuckDB's catalog uses lies inside the file."""
    try:
        size = path.stat().st_size
        block_size = int(con.execute(
            "SELECT block_size FROM pragma_database_size() WHERE database_name = current_database()"
        ).fetchall()[0][0])
        last = _last_block(con)
    except duckdb.Error as exc:
        raise explain(exc, path) from None
    whole, rest = divmod(size - HEADER_BYTES, block_size)
    if size < HEADER_BYTES or rest:
        raise damaged(path, f"{size} bytes is not DuckDB's header plus whole {block_size}-byte "
                            "blocks: the file was cut short or written over")
    if last is not None and last >= whole:
        raise damaged(path, f"its tables use block {last} but the file ends after block "
                            f"{whole - 1}: the file was cut short")


def _last_block(con: duckdb.DuckDBPyConnection) -> int | None:
    """The highest block id the catalog refers to (metadata and every table's segments)."""
    blocks = [r[0] for r in con.execute("SELECT max(block_id) FROM pragma_metadata_info()").fetchall()]
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND NOT temporary").fetchall()]
    if tables:
        cols = {d[0] for d in con.execute(
            f"SELECT * FROM pragma_storage_info({_literal(tables[0])}) LIMIT 0").description or []}
        keep = "WHERE persistent" if "persistent" in cols else ""
        extra = ("UNION ALL SELECT unnest(additional_block_ids) FROM s"
                 if "additional_block_ids" in cols else "")
        for t in tables:
            blocks += [r[0] for r in con.execute(
                f"WITH s AS (SELECT * FROM pragma_storage_info({_literal(t)}) {keep}) "
                f"SELECT max(b) FROM (SELECT block_id AS b FROM s {extra})").fetchall()]
    found = [int(b) for b in blocks if b is not None]
    return max(found) if found else None


def _literal(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def _short(text: str) -> str:
    """DuckDB's message without its prefix, its URL, or the file name said already."""
    text = re.sub(r"^[A-Za-z ]*(Error|Exception): ", "", text.strip())
    text = re.sub(r"\s*See also https?://\S+", "", text)
    return re.sub(r'(from |the )?file "[^"]*"', "the file", text)[:300]
