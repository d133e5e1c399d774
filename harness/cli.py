"""`gpu2tpu evaluate`, `gpu2tpu report`, `gpu2tpu demo`, `gpu2tpu tasks`."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.harness.engine import add_engine_options, engine_from_args, run_evaluations
from gpu2tpu.judge.criteria import CRITERION_NAMES
from gpu2tpu.record.report import read_json
from gpu2tpu.record.targets import DEFAULT_TARGET, TARGET_NAMES
from gpu2tpu.task_options import add_task_options, apply_task_options
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.materialise import migration_patch
from gpu2tpu.tasks.spec import read_label

DEMO_TASK = "cifar_amp"
DEMO_BROKEN = ("stays_on_cpu", "item_every_step", "clip_changed")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="run predictions under observation and grade them",
                       description="Apply each prediction (patch or migrated directory) to its task, "
                       "run it on the target under the probe, run the reference (cached), and grade "
                       "the five criteria. Writes runs/RUN_ID/AGENT/TASK/report.json and more.")
    p.add_argument("--predictions", required=True, type=Path, help="JSONL file of predictions")
    p.add_argument("--run-id", required=True, help="name of this run (directory under --runs)")
    p.add_argument("--tasks", nargs="*", help="only these task ids")
    p.add_argument("--workers", type=int, default=1, help="candidate runs in parallel (default 1)")
    p.add_argument("--target", choices=TARGET_NAMES, default=DEFAULT_TARGET,
                   help=f"target hardware (default {DEFAULT_TARGET}: torch_xla on this CPU)")
    p.add_argument("--timeout", type=float, help="override each task's time limit (seconds)")
    p.add_argument("--runs", type=Path, default=Path("runs"), help="root of run directories")
    p.add_argument("--unsafe-no-sandbox", action="store_true",  # isolation (issue 9)
                   help="run the graded code without bubblewrap when it is missing (reports say "
                   "sandbox: none; the leaderboard refuses such runs)")
    add_task_options(p)
    add_engine_options(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("report", help="re-grade a run from its saved traces (runs nothing)",
                       description="Verify every saved file against its recorded hash and grade "
                       "again from the traces; prints the verdict table. Exit 1 if a file was altered.")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--json", action="store_true", help="print verdicts as JSON")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="evaluate the gold and three broken migrations of a practice task",
                       description=f"Offline end-to-end demo on practice task {DEMO_TASK}: gold plus "
                       f"{', '.join(DEMO_BROKEN)}. Prints the verdict table and the expected labels.")
    p.add_argument("--runs", type=Path, default=Path("runs"))
    p.add_argument("--workers", type=int, default=2,
                   help="candidate runs in parallel (default 2: the four runs two at a time)")
    add_engine_options(p)
    p.set_defaults(func=cmd_demo)
    from gpu2tpu.harness.validate import register as register_validate
    register_validate(sub)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from gpu2tpu.harness.predictions import PredictionError

    apply_task_options(args)
    engine = engine_from_args(args)
    try:
        summary = run_evaluations(args.predictions, args.run_id, args.runs, args.tasks,
                                  args.workers, args.target, args.timeout,
                                  unsafe=args.unsafe_no_sandbox, engine=engine)
    except PredictionError as exc:
        raise UserError(str(exc)) from exc
    run_dir = args.runs.expanduser() / args.run_id
    print(format_table(load_rows(run_dir, summary["evaluations"])))
    if summary["errors"]:
        print(f"\n{len(summary['errors'])} prediction(s) skipped (see the 'skipped:' lines above)")
    print(f"\nreports in {run_dir}")
    return 1 if summary["errors"] else 0


def cmd_report(args: argparse.Namespace) -> int:
    from gpu2tpu.judge.regrade import regrade
    from gpu2tpu.record.report import Report, ReportError, RunLayout, read_json

    layout = RunLayout(args.run_dir)
    if not layout.summary.is_file():
        raise UserError(f"{args.run_dir} has no summary.json: is it a run directory written by "
                        "`gpu2tpu evaluate`?")
    try:
        evaluations = read_json(layout.summary).get("evaluations") or []
    except ReportError as exc:
        raise UserError(str(exc)) from exc
    rows, problems = [], 0
    for rel in evaluations:
        try:
            path = layout.inside(str(rel))
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
    return 1 if problems else 0


def cmd_demo(args: argparse.Namespace) -> int:
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
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "demo.jsonl"
        preds.write_text("".join(json.dumps(line) + "\n" for line in lines))
        summary = run_evaluations(preds, "demo", args.runs, workers=args.workers, engine=engine)
    rows = load_rows(args.runs.expanduser() / "demo", summary["evaluations"])
    print(format_table(rows))
    def outcome(r: dict[str, Any]) -> str:
        return "migrated" if r["verdict"]["migrated"] else r["verdict"]["category"]

    wrong = [r["agent"] for r in rows if outcome(r) != expected[r["agent"]]]
    print(f"\nexpected: {', '.join(f'{k}={v}' for k, v in expected.items())}")
    print("all verdicts as labelled" if not wrong else f"UNEXPECTED verdicts: {', '.join(wrong)}")
    return 1 if wrong else 0


def load_rows(run_dir: Path, evaluations: list[str]) -> list[dict[str, Any]]:
    return [read_json(run_dir / rel) for rel in evaluations]


def format_table(rows: list[dict[str, Any]]) -> str:
    head = ["agent", "task", *CRITERION_NAMES, "migrated", "silent", "category", "reference"]
    body = []
    for r in sorted(rows, key=lambda r: (r["agent"], r["task_id"], r["attempt"])):
        v = r["verdict"]
        marks = ["pass" if v["criteria"][c]["passed"] else "FAIL" for c in CRITERION_NAMES]
        body.append([r["agent"], r["task_id"] + (f".{r['attempt']}" if r["attempt"] > 1 else ""),
                     *marks, "yes" if v["migrated"] else "no", "yes" if v["silent"] else "no",
                     v["category"] or "-", (r.get("reference") or {}).get("device") or "-"])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*["-" * w for w in widths]),
                      *(fmt.format(*row) for row in body)])
