"""`gpu2tpu validate`: grade a task's own labelled migrations and print the confusion table.

For each task: the gold and every `migrations/alternatives/*.patch` are expected `migrated`; every
`migrations/broken/<name>.patch` is expected as its `<name>.yaml` says (category, failing, silent).
Task authors run it on a new task directory (`--task-dir DIR`, with `--sources DIR` for an upstream
task's snapshot); the test suite runs it on the labelled practice suite."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.harness import validated
from gpu2tpu.harness.engine import Engine, add_engine_options, engine_from_args, run_evaluations
from gpu2tpu.harness.evidence_here import say_at_start
from gpu2tpu.harness.inputs import add_workers_option, check_run_id, check_workers
from gpu2tpu.harness.margins import saved_reports, tabulate
from gpu2tpu.harness.progress import Progress
from gpu2tpu.harness.run_dir import refresh_summary
from gpu2tpu.judge.criteria import CRITERION_NAMES
from gpu2tpu.record.report import ReportError, RunLayout, read_json
from gpu2tpu.record.targets import DEFAULT_TARGET, TARGET_NAMES, get_target
from gpu2tpu.sandbox import process as sandboxed
from gpu2tpu.task_options import add_task_options, apply_task_options
from gpu2tpu.tasks.finder import find_task, list_tasks
from gpu2tpu.tasks.spec import RunSpec, read_label, read_task_yaml

MIGRATED = "migrated"
# The test suite grades every whole suite (as `--all` does) when this is set, else as `--changed`
WHOLE_SUITES_ENV = "GPU2TPU_VALIDATE_ALL"


@dataclass(frozen=True)
class Labelled:
    """One labelled migration of a task and what it must be graded."""

    task_id: str
    agent: str  # gold, alt-<name> or broken-<name>
    patch: str
    category: str  # "migrated" or the failure category
    failing: tuple[str, ...]
    silent: bool


def labelled_migrations(spec: RunSpec) -> list[Labelled]:
    """Gold, alternatives and broken migrations, patches and (upstream) recipes alike, as diffs."""
    from gpu2tpu.tasks.materialise import migration_patch

    if spec.upstream:
        spec.migration_file("gold")  # a clear error when the task has none
    else:
        _ = spec.gold_patch
    out = [Labelled(spec.task_id, "gold", migration_patch(spec, "gold"), MIGRATED, (), False)]
    for name in spec.migration_names("alternatives"):
        out.append(Labelled(spec.task_id, f"alt-{name.split('/', 1)[1]}", migration_patch(spec, name),
                            MIGRATED, (), False))
    for name in spec.migration_names("broken"):
        patch = spec.migration_file(name)
        label = read_label(patch)
        out.append(Labelled(spec.task_id, f"broken-{patch.stem}", migration_patch(spec, name),
                            label.category, label.failing, label.silent))
    return out


def labels(spec: RunSpec) -> list[Labelled]:
    """The labelled migrations' names and labels, without their patches (what re-grading kept runs
    compares against: their patches are in the kept runs)."""
    spec.migration_file("gold")
    out = [Labelled(spec.task_id, "gold", "", MIGRATED, (), False)]
    out += [Labelled(spec.task_id, f"alt-{name.split('/', 1)[1]}", "", MIGRATED, (), False)
            for name in spec.migration_names("alternatives")]
    for name in spec.migration_names("broken"):
        label = read_label(spec.migration_file(name))
        out.append(Labelled(spec.task_id, f"broken-{name.split('/', 1)[1]}", "", label.category,
                            label.failing, label.silent))
    return out


def graded(verdict: dict[str, Any]) -> tuple[str, tuple[str, ...], bool]:
    if verdict.get("migrated"):
        return MIGRATED, (), False
    failing = tuple(c for c in CRITERION_NAMES if not verdict["criteria"][c]["passed"])
    return str(verdict.get("category")), failing, bool(verdict.get("silent"))


def expected(category: str, failing: tuple[str, ...], silent: bool) -> tuple[str, tuple[str, ...], bool]:
    """A label as `graded` returns a verdict: the failing criteria in the criteria's order, so a
    label may list them in any order; a name that is no criterion never matches, and says so."""
    if category == MIGRATED:
        return MIGRATED, (), False
    unknown = tuple(f"unknown criterion {c!r}" for c in failing if c not in CRITERION_NAMES)
    return category, tuple(c for c in CRITERION_NAMES if c in failing) + unknown, silent


def mismatches(items: list[Labelled], verdicts: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    out = []
    for item in items:
        verdict = verdicts.get((item.task_id, item.agent))
        if verdict is None:
            out.append(f"{item.task_id}/{item.agent}: no report")
            continue
        got = graded(verdict)
        want = expected(item.category, item.failing, item.silent)
        if got != want:
            bad = [e["text"] for c in verdict["criteria"].values() for e in c["evidence"] if not e["ok"]]
            out.append(f"{item.task_id}/{item.agent}: graded {got}, labelled {want}; failing evidence: {bad}")
    return out


def confusion_table(items: list[Labelled], verdicts: dict[tuple[str, str], dict[str, Any]]) -> str:
    """Rows: expected outcome; columns: graded outcome (silent failures marked with `*`)."""
    cells: Counter[tuple[str, str]] = Counter()
    for item in items:
        verdict = verdicts.get((item.task_id, item.agent))
        got = "no report" if verdict is None else graded(verdict)[0]
        if verdict is not None and verdict.get("silent"):
            got += "*"
        cells[(item.category, got)] += 1
    rows = sorted({r for r, _ in cells}, key=lambda r: (r != MIGRATED, r))
    cols = sorted({c for _, c in cells}, key=lambda c: (c != MIGRATED, c))
    head = ["expected \\ graded", *cols]
    body = [[r, *(str(cells.get((r, c), "")) for c in cols)] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths)),
                      *(fmt.format(*row) for row in body), "(* silent: the process exited 0)"])


def validate(task_ids: list[str], runs_root: Path, run_id: str, workers: int = 1,
             target: str = DEFAULT_TARGET, gold_only: frozenset[str] = frozenset(),
             engine: Engine | None = None,
             ) -> tuple[list[Labelled], dict[tuple[str, str], dict[str, Any]], dict[str, Any]]:
    """Grade the labelled migrations of `task_ids` (only the gold of those in `gold_only`); returns
    them, their verdicts and the run's summary.json content."""

    items = [m for t in task_ids for m in labelled_migrations(find_task(t))
             if t not in gold_only or m.agent == "gold"]
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "labelled.jsonl"
        preds.write_text("".join(json.dumps({"schema_version": 1, "task_id": m.task_id, "agent": m.agent,
                                             "patch": m.patch, "claimed_success": True}) + "\n"
                                 for m in items))
        summary = run_evaluations(preds, run_id, runs_root, workers=workers, target_name=target,
                                  engine=engine)
    run_dir = runs_root / run_id
    verdicts = {}
    for rel in summary["evaluations"]:
        report = read_json(run_dir / rel)
        verdicts[(report["task_id"], report["agent"])] = report["verdict"]
    return items, verdicts, summary


Verdicts = dict[tuple[str, str], dict[str, Any]]  # (task, agent) -> verdict


def regrade_runs(run_dirs: list[Path]) -> tuple[list[Labelled], Verdicts, list[str]]:
    """Grade saved labelled runs again with this grading code (no candidate runs): what a change to
    the criteria would do to each labelled migration. Evaluations of a task that changed since are
    skipped, with the reason. Proves nothing about the code that records traces, so writes no record."""
    from gpu2tpu.judge.regrade import regrade
    from gpu2tpu.record.report import Report, ReportError, RunLayout

    items: dict[tuple[str, str], Labelled] = {}
    verdicts: dict[tuple[str, str], dict[str, Any]] = {}
    skipped: list[str] = []
    for run_dir in run_dirs:
        layout = RunLayout(run_dir)
        if not layout.summary.is_file():
            raise UserError(f"{run_dir} has no summary.json: give run directories written by "
                            "`gpu2tpu validate` or `evaluate`")
        for path in saved_reports(run_dir):
            rel = path.relative_to(run_dir).as_posix()
            try:
                report = Report.load(path)
                labels = {m.agent: m for m in labelled_migrations(find_task(report.task_id))}
                if report.agent not in labels:
                    continue  # not a labelled migration
                verdicts[(report.task_id, report.agent)] = regrade(report, path)["verdict"]
                items[(report.task_id, report.agent)] = labels[report.agent]
            except (ReportError, UserError, OSError) as exc:
                skipped.append(f"{rel}: {exc}")
    return list(items.values()), verdicts, skipped


def plan(task_ids: list[str], changed_only: bool) -> tuple[frozenset[str], dict[str, str]]:
    """(tasks graded gold only, why each other task gets its whole suite). With `changed_only`,
    a task whose validation record still holds gets its gold only; otherwise every task is whole."""
    if not changed_only:
        return frozenset(), {t: "asked for" for t in task_ids}
    why = {t: validated.changed(find_task(t)) for t in task_ids}
    return frozenset(t for t, w in why.items() if w is None), {t: w for t, w in why.items() if w}


def regrade_kept(spec: RunSpec, target: str, sandbox: str) -> tuple[list[Labelled], Verdicts, dict] | None:
    """The task's kept labelled runs (harness/evidence.py) graded again with this judge: its
    labels, their verdicts and the pins of what was graded; None when no kept suite of this task
    under this recorder and runtime covers every labelled migration (it is then run)."""
    from gpu2tpu.harness import evidence
    from gpu2tpu.harness.references import bundle_pin
    from gpu2tpu.judge.regrade import regrade
    from gpu2tpu.record.report import Report, ReportError

    found = evidence.kept(spec, get_target(target), sandbox)
    if found is None:
        return None
    root, reports = found
    items = labels(spec)
    verdicts: Verdicts = {}
    refs = set()
    for rel in reports:
        try:
            report = Report.load(root / rel)
            verdicts[(report.task_id, report.agent)] = regrade(report, root / rel)["verdict"]
        except (ReportError, UserError, OSError) as exc:
            print(f"{spec.task_id}: kept run {rel} not re-graded ({exc}): running the suite")
            return None
        refs.add(str((report.reference or {}).get("dir")))
    if any((m.task_id, m.agent) not in verdicts for m in items) or len(refs) != 1:
        return None
    pins = {"references": bundle_pin(root / refs.pop()),
            "evidence": {"key": root.name.rsplit("-", 1)[1], "digest": evidence.digest(root)}}
    return items, verdicts, {**pins, "evidence_dir": root}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="grade tasks' gold, alternative and broken migrations "
                       "against their labels", description=__doc__)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--tasks", nargs="*", help="task ids (default: every task found)")
    which.add_argument("--all", action="store_true",
                       help="every task, whole labelled suites: what a release is checked with")
    p.add_argument("--changed", action="store_true",
                   help="every gold, and the whole labelled suite only of tasks whose files, grading "
                   "code or torch versions changed since their validated.json")
    p.add_argument("--rerun", action="store_true",
                   help="run every whole suite again even where its labelled runs are kept under this "
                   "recording code (by default a task whose record differs in the judging code alone "
                   "is re-validated by re-grading its kept runs)")
    p.add_argument("--no-record", action="store_true",
                   help="do not write validated.json for the tasks whose whole suite passed")
    add_task_options(p)
    p.add_argument("--run-id", default="validate", help="name of the run directory under --runs")
    p.add_argument("--runs", type=Path, default=Path("runs"), help="root of run directories")
    add_workers_option(p)
    p.add_argument("--target", choices=TARGET_NAMES, default=DEFAULT_TARGET)
    p.add_argument("--regrade", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run nothing: grade these saved runs of labelled migrations again with this "
                   "grading code and compare with the labels (what a criteria change would do; "
                   "writes no validated.json)")
    add_engine_options(p)
    p.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    apply_task_options(args)
    if args.regrade:
        return _cmd_regrade(args.regrade)
    check_run_id(args.run_id)
    check_workers(args.workers)
    engine = engine_from_args(args)
    say_at_start(engine.name, args.target)
    task_ids = args.tasks or ([_task_id_of(d) for d in args.task_dir if (d / "task.yaml").is_file()]
                              if args.task_dir and not args.all else []) or list_tasks()
    gold_only, whole = plan(task_ids, args.changed)
    sandbox = sandboxed.sandbox_mode()
    kept = {} if args.rerun else {t: k for t in whole
                                  if (k := regrade_kept(find_task(t), args.target, sandbox))}
    for task_id in task_ids:
        what = "gold only (validated.json holds)" if task_id in gold_only else \
            f"whole suite, re-graded from its kept runs: {whole[task_id]}" if task_id in kept else \
            f"whole suite: {whole[task_id]}"
        print(f"{task_id}: {what}")
    runs = args.runs.expanduser().resolve()
    todo = [t for t in task_ids if t not in kept]
    if engine.name == "local" and len(todo) > 1:
        _build_ahead(todo[1:], args.target)
    items: list[Labelled] = []
    verdicts: Verdicts = {}
    summaries: list[dict[str, Any]] = []
    progress = Progress(len(task_ids))  # `[k/N] task ...; elapsed, about M min left` per task
    for task_id in task_ids:  # one task at a time, so each one's cost is measured alone
        t0 = time.monotonic()
        spec = find_task(task_id)
        if task_id in kept:
            got_items, got, pins = kept[task_id]
            pins = {k: v for k, v in pins.items() if k != "evidence_dir"}
            how = "regraded"
        else:
            got_items, got, summary = validate([task_id], runs, args.run_id, args.workers, args.target,
                                               gold_only, engine)
            summaries.append(summary)
            layout = RunLayout(runs / args.run_id)
            refresh_summary(layout)  # every evaluation on disk, this validate's and earlier ones
            how = "ran"
            pins = _keep(spec, args.target, sandbox, layout.root, summary) \
                if task_id not in gold_only else {}
        wall = time.monotonic() - t0
        items += got_items
        verdicts.update(got)
        ok = not mismatches(got_items, got)
        progress.done()
        print(progress.line(f"{task_id}: {len(got_items)} migration(s) {how} in {wall:.0f} s, "
                            f"{'as labelled' if ok else 'MISMATCH'}"), flush=True)
        if ok and got_items and task_id not in gold_only and not args.no_record:
            if how == "regraded":  # the suite's cost stays the run's (CI orders tasks by it)
                pins["regrade_s"] = round(wall, 1)
                wall = float((validated.read(spec) or {}).get("wall_s") or wall)
            validated.write(spec, len(got_items), wall, how, pins)
    run_dirs = ([runs / args.run_id] if summaries else []) + [k[2]["evidence_dir"] for k in kept.values()]
    wrong = print_outcome(items, verdicts, run_dirs, stored=not kept)  # kept runs: graded again
    total = progress.elapsed()
    print(f"\n{len(items) - len(wrong)} of {len(items)} migrations graded as labelled "
          f"({sum(1 for t in task_ids if t in kept)} task(s) re-graded from kept runs), "
          f"{len(task_ids)} task(s) in {total:.0f} s ({total / max(1, len(task_ids)):.0f} s per task)")
    return 1 if wrong else 0


def _keep(spec: RunSpec, target: str, sandbox: str, run_dir: Path, summary: dict[str, Any]) -> dict:
    """Keep the task's whole labelled suite just run (harness/evidence.py) and return the pins
    its record carries: the reference bundle's and the kept runs' digests."""
    from gpu2tpu.harness import evidence
    from gpu2tpu.harness.references import bundle_pin

    reports = [rel for rel in summary["evaluations"] if rel.split("/")[1] == spec.task_id]
    try:
        refs = {str((read_json(run_dir / rel).get("reference") or {}).get("dir")) for rel in reports}
        if len(refs) != 1:
            return {}
        pins = {"references": bundle_pin(run_dir / refs.pop())}
        pins["evidence"] = evidence.keep(spec, get_target(target), sandbox, run_dir, reports)
    except (OSError, ReportError) as exc:
        print(f"{spec.task_id}: its labelled runs were not kept ({exc}); a judging change runs them again")
        return {}
    return pins


def _build_ahead(task_ids: list[str], target: str) -> None:
    """Build the later tasks' reference bundles, one at a time, while earlier tasks are graded: a
    bundle's runs are sequential, so a task whose references are cold would otherwise leave a
    core idle (the cache's lock makes a task wait for a bundle being built, never build it twice).
    A bundle that fails to build here is built, and its failure reported, by the task's turn."""
    from gpu2tpu.harness.evaluate import get_target
    from gpu2tpu.harness.references import ensure_references

    def build() -> None:
        for task_id in task_ids:
            try:
                ensure_references(find_task(task_id), get_target(target),
                                  lambda m: print(f"(ahead) {m}", file=sys.stderr, flush=True))
            except Exception as exc:  # the task's own turn builds it again and reports it
                print(f"(ahead) {task_id}: references not built ahead: {exc}", file=sys.stderr)

    threading.Thread(target=build, name="references-ahead", daemon=True).start()


def print_outcome(items: list[Labelled], verdicts: Verdicts, run_dirs: list[Path], stored: bool) -> list[str]:
    """The confusion table, the validity report over `run_dirs` (their stored verdicts, or
    regraded) and a line per mismatch; returns the mismatches."""
    print(confusion_table(items, verdicts))
    if items:
        print("\nvalidity report: value/limit of each signal, farthest correct and nearest broken")
        tabulate(run_dirs, stored=stored)
    wrong = mismatches(items, verdicts)
    for line in wrong:
        print(f"MISMATCH {line}")
    return wrong


def _cmd_regrade(run_dirs: list[Path]) -> int:
    items, verdicts, skipped = regrade_runs([d.expanduser() for d in run_dirs])
    for line in skipped:
        print(f"skipped {line}")
    wrong = print_outcome(items, verdicts, [d.expanduser() for d in run_dirs], stored=False)
    print(f"\n{len(items) - len(wrong)} of {len(items)} saved migrations regraded as labelled "
          f"({len(skipped)} skipped)")
    return 1 if wrong or not items else 0


def _task_id_of(task_dir: Path) -> str:
    return str(read_task_yaml(task_dir).get("task_id") or task_dir.name)
