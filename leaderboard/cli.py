"""`gpu2tpu submit` and `gpu2tpu leaderboard ...`: the store's command line."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gpu2tpu.harness.engine import add_engine_options, engine_from_args
from gpu2tpu.harness.inputs import add_workers_option
from gpu2tpu.leaderboard.cli_help import VIEW_HELP, WAIT_NOTE, example
from gpu2tpu.leaderboard.paths import DB_ENV, default_db_path
from gpu2tpu.leaderboard.queries import FORMATS, TRUSTS, VIEWS, hidden_note, render, run_sql, run_view

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

_T = TypeVar("_T")

_S = argparse.SUPPRESS  # sub-command options only override the parent's when given


def register(sub: argparse._SubParsersAction) -> None:
    """Add `submit` and `leaderboard` to the `gpu2tpu` parser."""
    p = sub.add_parser(
        "submit",
        help="re-score a run from its traces and add it to the leaderboard store",
        description="Check every file of RUN_DIR against its recorded sha256, re-score every "
        "evaluation from its traces with the harness's criteria (report.json verdicts are not "
        "trusted), and add the run to the store in one transaction. Refuses, writing nothing, a "
        "run with missing traces, modified files, an unknown harness version or corpus revision, "
        "or metadata without agent/model/organisation. Submitting the same run twice is a no-op."
        + WAIT_NOTE,
        **example("submit"),
    )
    p.add_argument(
        "run_dir", type=Path, nargs="?", metavar="RUN_DIR",
        help="runs/<run_id> from evaluate: stored as self-reported (not in the default ranking)",
    )
    p.add_argument(
        "--predictions", type=Path, metavar="FILE",
        help="instead of RUN_DIR: pack these predictions (patches or migrated trees, with their "
        "trajectories) into a bundle for the maintainers to re-execute and rank as verified",
    )
    p.add_argument(
        "--out", type=Path, default=Path("submission.tar.gz"), metavar="BUNDLE",
        help="where --predictions writes the bundle (default submission.tar.gz)",
    )
    p.add_argument(
        "--metadata",
        type=Path,
        required=True,
        help="YAML file: agent, model, organisation (required; plain names of ASCII letters, digits "
        "and a few of ._-+/:@() and space, at most 100 characters); date, url, description, ...; "
        "or `agents:`, a list of such entries, for several agents in one submission",
    )
    _db_option(p)
    p.set_defaults(func=_cmd_submit)

    lb = sub.add_parser(
        "leaderboard",
        help="leaderboard tables, ad-hoc SQL, export/publish, static site",
        description="Query the leaderboard store (default view: agents). Views: agents, tasks, "
        "failures, costs, calibration. Reads --db (default $GPU2TPU_DB or "
        "~/.cache/gpu2tpu/leaderboard.duckdb) read-only, or an export with --from." + WAIT_NOTE,
        **example("leaderboard"),
    )
    _view_options(lb, argparse_default=True)
    lb.set_defaults(func=_cmd_view, view="agents")
    views = lb.add_subparsers(dest="leaderboard_command", metavar="VIEW_OR_COMMAND")
    for view in VIEWS:
        v = views.add_parser(view, help=f"the {view} table", description=VIEW_HELP[view],
                             **example(view))
        _view_options(v, argparse_default=False)
        v.set_defaults(func=_cmd_view, view=view)

    q = views.add_parser(
        "sql",
        help="run an ad-hoc SELECT on a read-only connection",
        description="Run one SQL query against the store's tables (submissions, evaluations, "
        "evidence, tasks, prices, schema_version) on a read-only connection.",
        **example("sql"),
    )
    q.add_argument("query", metavar="SQL", help='e.g. "SELECT agent, count(*) FROM evaluations"')
    _view_options(q, argparse_default=False)
    q.set_defaults(func=_cmd_sql)

    e = views.add_parser(
        "export",
        help="write the tables as parquet plus manifest.json",
        description="Write every table (tables/*.parquet), the five views (views/*.parquet), "
        "manifest.json (schema_version, harness version, corpus revision, row counts, sha256) "
        "and a Hub dataset card README.md to DIR. DIR is written whole or not at all (a "
        "failure leaves an earlier export as it was).",
        **example("export"),
    )
    e.add_argument("--to", type=Path, required=True, metavar="DIR", help="output directory")
    _source_options(e, argparse_default=False)
    e.set_defaults(func=_cmd_export)

    pub = views.add_parser(
        "publish",
        help="upload an export to a Hugging Face Hub dataset",
        description="Export the store (or take --export-dir) and upload it with huggingface_hub "
        "to the dataset REPO_ID (created if missing). Uses your saved Hub token.",
        **example("publish"),
    )
    pub.add_argument("--repo-id", required=True, help="OWNER/NAME of the Hub dataset")
    pub.add_argument("--export-dir", type=Path, help="upload this export instead of exporting")
    pub.add_argument("--private", action="store_true", help="create the dataset as private")
    _db_option(pub, default=_S)
    pub.set_defaults(func=_cmd_publish)

    s = views.add_parser(
        "site",
        help="write a static leaderboard page (index.html)",
        description="Write DIR/index.html and DIR/details/: a static page (no server, no network "
        "at view time; works from file:// and as a Hugging Face static Space) with the ranking "
        "(verified and self-reported apart), plots, and a drill-down per evaluation; plus each "
        "view as markdown. DIR is written whole or not at all (a failure leaves an earlier page "
        "as it was).",
        **example("site"),
    )
    s.add_argument("--to", type=Path, required=True, metavar="DIR", help="output directory")
    s.add_argument(
        "--runs", type=Path, metavar="RUNS_ROOT",
        help="the runs folder (holding <run_id>/ from evaluate, e.g. runs): copy each "
        "evaluation's report and trace next to the page and link them from its drill-down",
    )
    _source_options(s, argparse_default=False)
    s.set_defaults(func=_cmd_site)

    ver = views.add_parser(
        "verify",
        help="re-execute a submitted bundle here and store it as verified",
        description="Unpack BUNDLE (from gpu2tpu submit --predictions), check every member "
        "against its sha256, run gpu2tpu evaluate on this machine, and store the re-executed "
        "results as verified; their references become the published references.",
        **example("verify"),
    )
    ver.add_argument("bundle", type=Path, metavar="BUNDLE")
    ver.add_argument("--runs", type=Path, help="keep the re-executed run under this directory")
    add_workers_option(ver)
    add_engine_options(ver)
    _db_option(ver, default=_S)
    ver.set_defaults(func=_cmd_verify)

    m = views.add_parser(
        "migrate",
        help="upgrade a store to the current schema version",
        description="Apply pending schema migrations to the store (recorded in schema_version).",
        **example("migrate"),
    )
    _db_option(m, default=_S)
    m.set_defaults(func=_cmd_migrate)


def _db_option(p: argparse.ArgumentParser, default: object = None) -> None:
    p.add_argument(
        "--db",
        type=Path,
        default=default,
        help=f"store file (default ${DB_ENV} or ~/.cache/gpu2tpu/leaderboard.duckdb)",
    )


def _source_options(p: argparse.ArgumentParser, argparse_default: bool) -> None:
    default = None if argparse_default else _S
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--db",
        type=Path,
        default=default,
        help=f"store file, opened read-only (default ${DB_ENV} or the user cache)",
    )
    group.add_argument(
        "--from",
        dest="source",
        default=default,
        metavar="DIR_OR_HF",
        help="read an export instead: a directory or hf://datasets/OWNER/NAME[@REV]",
    )


def _view_options(p: argparse.ArgumentParser, argparse_default: bool) -> None:
    default = (lambda v: v) if argparse_default else (lambda v: _S)
    p.add_argument("--format", choices=FORMATS, default=default("table"), help="output format")
    p.add_argument("--agent", default=default(None), help="only this agent")
    p.add_argument("--task", default=default(None), help="only this task (tasks, costs)")
    p.add_argument(
        "--trust", choices=TRUSTS, default=default(None),
        help="verified (re-executed by the maintainers), self-reported, or all; default: agents "
        "shows both apart (only verified is ranked), the other views count verified results",
    )
    _source_options(p, argparse_default)


def _user_error(message: str) -> Exception:
    from gpu2tpu.errors import UserError

    return UserError(message)


def _db(args: argparse.Namespace) -> Path:
    return Path(args.db).expanduser() if getattr(args, "db", None) else default_db_path()


def _reader(args: argparse.Namespace) -> duckdb.DuckDBPyConnection:
    import duckdb

    from gpu2tpu.leaderboard.export import ExportError, open_export
    from gpu2tpu.leaderboard.schema import StoreError, open_read_only

    try:
        if getattr(args, "source", None):
            source = str(args.source)
            return open_export(source if source.startswith("hf://") else str(Path(source).expanduser()))
        return open_read_only(_db(args))  # waits for a writer (bounded); refuses a damaged file
    except (StoreError, ExportError) as exc:
        raise _user_error(str(exc)) from None
    except duckdb.Error as exc:
        raise _user_error(f"cannot read the store: {exc}") from exc


def _reading(args: argparse.Namespace, use: Callable[[duckdb.DuckDBPyConnection], _T]) -> _T:
    """`use` on a read-only connection: a store error DuckDB finds while reading (a block whose
    checksum fails) or an unwritable output folder is one line, and nothing was printed."""
    import duckdb

    from gpu2tpu.leaderboard.outdir import OutputError
    from gpu2tpu.leaderboard.store import explain

    con = _reader(args)
    try:
        return use(con)
    except OutputError as exc:
        raise _user_error(str(exc)) from None
    except duckdb.Error as exc:
        if getattr(args, "source", None):
            raise _user_error(f"cannot read the export {args.source}: {exc}") from None
        raise _user_error(str(explain(exc, _db(args)))) from None
    finally:
        con.close()


def _cmd_submit(args: argparse.Namespace) -> int:
    from gpu2tpu.leaderboard.ingest import submit
    from gpu2tpu.leaderboard.runfiles import SubmissionRefused

    try:
        if args.predictions:
            from gpu2tpu.leaderboard.bundle import pack

            if args.run_dir:
                raise SubmissionRefused("give RUN_DIR or --predictions, not both")
            manifest = pack(args.predictions, args.metadata, args.out)
            print(f"packed {manifest['predictions']} predictions of "
                  f"{', '.join(str(e['agent']) for e in manifest['metadata'])} into {args.out}; "
                  "send it to the maintainers, who run `gpu2tpu leaderboard verify` on it")
            return 0
        if not args.run_dir:
            raise SubmissionRefused("give RUN_DIR (self-reported) or --predictions FILE (verified)")
        result = submit(args.run_dir.expanduser(), args.metadata.expanduser(), _db(args))
    except SubmissionRefused as exc:
        raise _user_error(f"submission refused, nothing written: {exc}") from exc
    print(result.message())
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from gpu2tpu.leaderboard.bundle import verify
    from gpu2tpu.leaderboard.runfiles import SubmissionRefused
    from gpu2tpu.leaderboard.store import StoreError, check_writable

    try:  # a store that cannot take the result (unwritable, damaged) is said before the compute
        check_writable(_db(args))
    except StoreError as exc:
        raise _user_error(f"verification refused, nothing run: {exc}") from None
    try:
        result = verify(args.bundle, _db(args), args.runs, workers=args.workers,
                        engine=engine_from_args(args))
    except SubmissionRefused as exc:
        raise _user_error(f"verification refused, nothing written: {exc}") from exc
    print(result.message())
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    filters = {"agent": args.agent, "task": args.task, "trust": args.trust}
    result, note = _reading(args, lambda con: (run_view(con, args.view, **filters),
                                               hidden_note(con, args.view, **filters)))
    sys.stdout.write(render(result, args.format))
    if note:  # on stderr: csv and json output stay machine-readable
        print(f"gpu2tpu: {note}", file=sys.stderr)
    return 0


def _cmd_sql(args: argparse.Namespace) -> int:
    import duckdb

    from gpu2tpu.leaderboard.store import StoreDamaged, explain

    def query(con: duckdb.DuckDBPyConnection) -> Any:
        con.execute("SET enable_external_access = false")  # no COPY TO / file reads either
        try:
            return run_sql(con, args.query)
        except duckdb.Error as exc:
            if not getattr(args, "source", None) and isinstance(explain(exc, _db(args)), StoreDamaged):
                raise
            raise _user_error(f"query failed (the connection is read-only): {exc}") from exc

    sys.stdout.write(render(_reading(args, query), args.format))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from gpu2tpu.leaderboard.export import export_store

    manifest = _reading(args, lambda con: export_store(con, args.to.expanduser()))
    rows = ", ".join(f"{k} {v['rows']}" for k, v in manifest["tables"].items())
    print(f"exported to {args.to}: {rows}")
    return 0


def _cmd_publish(args: argparse.Namespace) -> int:
    from gpu2tpu.leaderboard.export import export_store, publish

    if args.export_dir:
        info = publish(args.export_dir.expanduser(), args.repo_id, private=args.private)
    else:
        with tempfile.TemporaryDirectory(prefix="gpu2tpu-export-") as tmp:
            _reading(args, lambda con: export_store(con, Path(tmp)))
            info = publish(Path(tmp), args.repo_id, private=args.private)
    print(f"published to https://huggingface.co/datasets/{args.repo_id} ({info})")
    return 0


def _cmd_site(args: argparse.Namespace) -> int:
    from gpu2tpu.leaderboard.site import build_site

    # the public page names no store and no local path of the maintainer
    page = _reading(args, lambda con: build_site(con, args.to.expanduser(), args.runs))
    print(f"wrote {page}")
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    import duckdb

    from gpu2tpu.leaderboard.schema import StoreError, migrate
    from gpu2tpu.leaderboard.store import connect, explain

    path = _db(args)
    if not path.exists():
        raise _user_error(f"no store at {path}")
    try:
        con = connect(path, read_only=False)  # waits (bounded) for readers; refuses damage
    except StoreError as exc:
        raise _user_error(str(exc)) from None
    try:
        applied = migrate(con)
    except StoreError as exc:
        raise _user_error(str(exc)) from None
    except duckdb.Error as exc:
        raise _user_error(str(explain(exc, path, writing=True))) from None
    finally:
        con.close()
    print(f"{path}: applied migrations {applied}" if applied else f"{path}: already current")
    return 0
