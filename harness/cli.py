"""`gpu2tpu evaluate`, `gpu2tpu report`, `gpu2tpu demo`, `gpu2tpu tasks`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.harness.engine import add_engine_options, engine_from_args, run_evaluations
from gpu2tpu.harness.inputs import add_workers_option, check_run_id, check_timeout, check_workers
from gpu2tpu.harness.interrupts import EXIT_INTERRUPTED, Interrupted
from gpu2tpu.harness.verdict_view import all_evidence, format_table, load_rows, why_failed
from gpu2tpu.record.report import read_json
from gpu2tpu.record.targets import DEFAULT_TARGET, TARGET_NAMES
from gpu2tpu.task_options import add_task_options, apply_task_options
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.materialise import migration_patch
from gpu2tpu.tasks.spec import read_label

DEMO_TASK = "cifar_amp"
DEMO_BROKEN = ("stays_on_cpu", "item_every_step", "clip_changed")
DEMO_METADATA = "examples/demo.yaml"

EVALUATE_EXAMPLES = """\
examples:
  gpu2tpu evaluate --predictions examples/preds.jsonl --run-id my-run
  gpu2tpu evaluate --predictions preds.jsonl --run-id my-run --tasks cifar_amp varlen_cls --workers 2
  gpu2tpu report runs/my-run          # the verdicts again, and why each failing one failed

a prediction is one JSON line (docs/formats.md):
  {"schema_version": 1, "task_id": "cifar_amp", "agent": "my-agent", "patch": "diff --git ..."}
or "migrated_dir": "path/to/tree" (relative to the predictions file) instead of "patch".

Ctrl-C once: nothing new starts, the running evaluations finish and are saved; run the same
command again to resume (finished evaluations are reused). Ctrl-C twice: stop now.
"""
REPORT_EXAMPLES = """\
examples:
  gpu2tpu report runs/my-run
  gpu2tpu report runs/my-run --evidence    # every evidence line of every criterion
  gpu2tpu report runs/my-run --json
"""
DEMO_EXAMPLES = f"""\
examples:
  gpu2tpu demo                  # grades into runs/demo (a few minutes on a CPU), then:
  gpu2tpu report runs/demo
  gpu2tpu submit runs/demo --metadata {DEMO_METADATA}
  gpu2tpu demo --workers 2      # two runs at a time, sooner where two cores are free
"""


def _text(paragraph: str) -> str:
    """A description, wrapped here (the raw formatter that keeps the examples' lines keeps it too)."""
    return textwrap.fill(" ".join(paragraph.split()), width=96)


def register(sub: argparse._SubParsersAction) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("evaluate", help="run predictions under observation and grade them",
                       formatter_class=raw, epilog=EVALUATE_EXAMPLES, description=_text(
                           "Apply each prediction (patch or migrated directory) to its task, run it on "
                           "the target under the probe, run the reference (cached), and grade the five "
                           "criteria. Writes runs/RUN_ID/AGENT/TASK/report.json and more; several "
                           "evaluates into one run id add to it. The whole predictions file is "
                           "checked before anything runs."))
    p.add_argument("--predictions", required=True, type=Path, help="JSONL file of predictions")
    p.add_argument("--run-id", required=True, help="name of this run: a folder under --runs (letters, "
                   "digits, '.', '_', '-')")
    p.add_argument("--tasks", nargs="*", help="only these task ids")
    add_workers_option(p)
    p.add_argument("--target", choices=TARGET_NAMES, default=DEFAULT_TARGET,
                   help=f"target hardware (default {DEFAULT_TARGET}: torch_xla on this CPU)")
    p.add_argument("--timeout", type=float, help="override each task's time limit (seconds, > 0)")
    p.add_argument("--runs", type=Path, default=Path("runs"), help="root of run directories")
    p.add_argument("--unsafe-no-sandbox", action="store_true",  # isolation (issue 9)
                   help="run the graded code without bubblewrap when it is missing (reports say "
                   "sandbox: none; the leaderboard refuses such runs)")
    add_task_options(p)
    add_engine_options(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("report", help="re-grade a run from its saved traces (runs nothing)",
                       formatter_class=raw, epilog=REPORT_EXAMPLES, description=_text(
                           "Verify every saved file against its recorded hash and grade again from "
                           "the traces (every evaluation in the run directory); prints the verdict "
                           "table and, for each failing evaluation, the deciding evidence of each "
                           "failing criterion. Exit 1 if a file was altered."))
    p.add_argument("run_dir", type=Path)
    p.add_argument("--json", action="store_true", help="print verdicts as JSON")
    p.add_argument("--evidence", action="store_true",
                   help="print every evidence line of every criterion, not only the deciding ones")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="evaluate the gold and three broken migrations of a practice task",
                       formatter_class=raw, epilog=DEMO_EXAMPLES, description=_text(
                           f"Offline end-to-end demo on practice task {DEMO_TASK}: gold plus "
                           f"{', '.join(DEMO_BROKEN)}. Prints the verdict table and the expected "
                           "labels, then where the results are and what to run next."))
    p.add_argument("--runs", type=Path, default=Path("runs"))
    add_workers_option(p)
    add_engine_options(p)
    p.set_defaults(func=cmd_demo)
    from gpu2tpu.harness.validate import register as register_validate
    register_validate(sub)


def cmd_evaluate(args: argparse.Namespace) -> int:
    check_run_id(args.run_id)
    check_workers(args.workers)
    check_timeout(args.timeout)
    apply_task_options(args)
    engine = engine_from_args(args)
    run_dir = args.runs.expanduser() / args.run_id
    try:
        summary = run_evaluations(args.predictions, args.run_id, args.runs, args.tasks,
                                  args.workers, args.target, args.timeout,
                                  unsafe=args.unsafe_no_sandbox, engine=engine)
    except Interrupted as stopped:
        _print_verdicts(run_dir, stopped.summary["evaluations"])
        print(f"\ninterrupted: {len(stopped.summary['evaluations'])} evaluation(s) graded and saved in "
              f"{run_dir}, {stopped.not_started} not started. To resume, run the same command again "
              f"(finished evaluations are reused):\n  {_evaluate_command(args)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    _print_verdicts(run_dir, summary["evaluations"])
    summary_file = run_dir / "summary.json"
    listed = len(read_json(summary_file).get("evaluations") or []) if summary_file.is_file() else 0
    if listed > len(summary["evaluations"]):
        print(f"\n{run_dir}/summary.json lists {listed} evaluations: these and "
              f"{listed - len(summary['evaluations'])} graded by earlier evaluates into this run id")
    print(f"\nreports in {run_dir}")
    return 1 if summary["errors"] else 0


def _print_verdicts(run_dir: Path, evaluations: list[str]) -> None:
    rows = load_rows(run_dir, evaluations)
    print(format_table(rows))
    why = why_failed(rows)
    if why:
        print(f"\n{why}")


def _evaluate_command(args: argparse.Namespace) -> str:
    """The command that was run, as the user would type it again (to resume)."""
    words = ["gpu2tpu", "evaluate", "--predictions", str(args.predictions), "--run-id", args.run_id,
             "--runs", str(args.runs)]
    words += ["--tasks", *args.tasks] if args.tasks else []
    words += ["--workers", str(args.workers)] if args.workers != 1 else []
    words += ["--target", args.target] if args.target != DEFAULT_TARGET else []
    words += ["--timeout", f"{args.timeout:g}"] if args.timeout is not None else []
    words += ["--unsafe-no-sandbox"] if args.unsafe_no_sandbox else []
    for folder in args.task_dir:
        words += ["--task-dir", str(folder)]
    words += ["--sources", str(args.sources)] if args.sources else []
    return shlex.join(words)


def cmd_report(args: argparse.Namespace) -> int:
    from gpu2tpu.harness.run_dir import evaluation_reports
    from gpu2tpu.judge.regrade import regrade
    from gpu2tpu.record.report import Report, ReportError, RunLayout

    layout = RunLayout(args.run_dir)
    on_disk = evaluation_reports(layout) if layout.root.is_dir() else []
    if not layout.summary.is_file() and not on_disk:
        raise UserError(f"{args.run_dir} has no summary.json: is it a run directory written by "
                        "`gpu2tpu evaluate`?")
    listed: list[str] = []
    if layout.summary.is_file():
        try:
            listed = [str(rel) for rel in read_json(layout.summary).get("evaluations") or []]
        except ReportError as exc:
            print(f"note: {exc}; reading the reports on disk", file=sys.stderr)
    rows, problems = [], 0
    for rel in sorted({*listed, *on_disk}):  # every graded evaluation, listed or not
        try:
            path = layout.inside(rel)
            report = Report.load(path)
            report.verdict = regrade(report, path)["verdict"]
        except ReportError as exc:
            print(f"refused: {exc}")
            problems += 1
            continue
        rows.append(report.to_dict())
    if args.json:
        print(json.dumps([{"agent": r["agent"], "task_id": r["task_id"], "attempt": r["attempt"],
                           "verdict": r["verdict"]} for r in rows], indent=2))
    else:
        print(format_table(rows))
        detail = all_evidence(rows) if args.evidence else why_failed(rows)
        if detail:
            print(f"\n{detail}")
    return 1 if problems else 0


def cmd_demo(args: argparse.Namespace) -> int:
    check_workers(args.workers)
    engine = engine_from_args(args)
    spec = find_task(DEMO_TASK)
    mig = spec.task_dir / "migrations"
    lines = [{"schema_version": 1, "task_id": DEMO_TASK, "agent": "gold",
              "patch": migration_patch(spec, "gold"), "claimed_success": True}]
    expected = {"gold": "migrated"}
    for name in DEMO_BROKEN:
        label = read_label(mig / "broken" / f"{name}.patch")
        lines.append({"schema_version": 1, "task_id": DEMO_TASK, "agent": f"broken-{name}",
                      "patch": migration_patch(spec, f"broken/{name}"), "claimed_success": True})
        expected[f"broken-{name}"] = label.category
    run_dir = args.runs / "demo"
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "demo.jsonl"
        preds.write_text("".join(json.dumps(line) + "\n" for line in lines))
        try:
            summary = run_evaluations(preds, "demo", args.runs, workers=args.workers, engine=engine)
        except Interrupted as stopped:
            print(format_table(load_rows(run_dir.expanduser(), stopped.summary["evaluations"])))
            print(f"\ninterrupted: {len(stopped.summary['evaluations'])} of {len(lines)} graded and "
                  f"saved in {run_dir}; run `gpu2tpu demo` again to grade the rest (finished ones "
                  "are reused)", file=sys.stderr)
            return EXIT_INTERRUPTED
    rows = load_rows(run_dir.expanduser(), summary["evaluations"])
    print(format_table(rows))
    def outcome(r: dict[str, Any]) -> str:
        return "migrated" if r["verdict"]["migrated"] else r["verdict"]["category"]

    wrong = [r["agent"] for r in rows if outcome(r) != expected[r["agent"]]]
    print(f"\nexpected: {', '.join(f'{k}={v}' for k, v in expected.items())}")
    print("all verdicts as labelled" if not wrong else f"UNEXPECTED verdicts: {', '.join(wrong)}")
    print(f"\nresults in {run_dir} (summary.json; AGENT/{DEMO_TASK}/report.json with the evidence); "
          "next, see why each broken one failed, then load them into the local leaderboard:")
    print(f"  gpu2tpu report {shlex.quote(str(run_dir))}")
    print(f"  gpu2tpu submit {shlex.quote(str(run_dir))} --metadata {DEMO_METADATA}")
    return 1 if wrong else 0
