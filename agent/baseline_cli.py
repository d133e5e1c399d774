"""`gpu2tpu agent baseline {noop,naive,gold}`: scripted baselines' predictions (no model, no API)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from gpu2tpu.errors import UserError

EXAMPLES = """\
examples:
  gpu2tpu agent baseline noop naive gold --out baselines.jsonl          # every task, three agents
  gpu2tpu agent baseline naive --out naive.jsonl --tasks cifar_amp varlen_cls
  gpu2tpu evaluate --predictions baselines.jsonl --run-id baselines --tasks cifar_amp
  gpu2tpu submit --predictions baselines.jsonl --metadata examples/baselines.yaml --out bundle.tar.gz

noop: the original code (one comment line appended to the entry script: the harness refuses an
      empty patch); naive: a careless port (.cuda() and CUDA devices become torch_xla.device(),
      torch.cuda.is_available() becomes True, torch_xla.sync() after each optimizer step);
gold: each task's migrations/gold. Agents baseline-noop, baseline-naive, baseline-gold; model
"none". docs/baselines.md says more.
"""


def register(asub: argparse._SubParsersAction) -> None:
    """Add `baseline` under `gpu2tpu agent`."""
    from gpu2tpu.agent.baselines import KINDS
    from gpu2tpu.task_options import add_task_options

    p = asub.add_parser(
        "baseline", help="write the scripted baselines' predictions (noop, naive, gold)",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
        description=textwrap.fill(
            "Predictions of scripted agents that need no model: noop (the original code), naive (a "
            "careless port: the same source rewrite on every task) and gold (the task's own "
            "migration, the ceiling), one line per task and baseline, for `gpu2tpu evaluate`. "
            "Upstream tasks need their sources ($GPU2TPU_SOURCES or --sources).", width=96))
    p.add_argument("kinds", nargs="+", choices=KINDS, metavar="{noop,naive,gold}",
                   help="which baselines (one or more)")
    p.add_argument("--out", required=True, type=Path, metavar="FILE", help="predictions JSONL to write")
    p.add_argument("--tasks", nargs="+", metavar="ID", default=None,
                   help="only these task ids (default: every task found)")
    p.add_argument("--kind", dest="task_kind", choices=("practice", "upstream"), default=None,
                   help="only practice or only upstream tasks")
    p.add_argument("--append", action="store_true",
                   help="add to an existing --out (a line it already holds is refused)")
    add_task_options(p)
    p.set_defaults(func=cmd_baseline)


def cmd_baseline(args: argparse.Namespace) -> int:
    from gpu2tpu.agent.baselines import write_baselines
    from gpu2tpu.task_options import apply_task_options
    from gpu2tpu.tasks.finder import find_task, list_tasks

    apply_task_options(args)
    known = list_tasks()
    ids = args.tasks or known
    unknown = [t for t in ids if t not in known]
    if unknown:
        raise UserError(f"--tasks: unknown task(s) {', '.join(map(repr, unknown))}; known tasks: "
                        f"{', '.join(known)} (`gpu2tpu tasks` lists them; --task-dir DIR adds a folder)")
    specs = [find_task(t) for t in ids]
    if args.task_kind:
        specs = [s for s in specs if s.kind == args.task_kind]
        if not specs:
            raise UserError(f"--kind {args.task_kind}: none of the selected tasks is {args.task_kind}")
    outcome = write_baselines(args.kinds, specs, args.out, append=args.append,
                              log=lambda line: print(line, file=sys.stderr))
    print(f"wrote {len(outcome.written)} prediction(s) to {args.out} "
          f"({', '.join('baseline-' + k for k in dict.fromkeys(args.kinds))}; {len(specs)} task(s))")
    if outcome.failed:
        print(f"{len(outcome.failed)} left out (their lines are not in {args.out}):", file=sys.stderr)
        for label, why in outcome.failed.items():
            print(f"  {label}: {why}", file=sys.stderr)
        print("an upstream task needs its source: set $GPU2TPU_SOURCES or pass --sources DIR "
              "(`gpu2tpu tasks fetch` fetches them), or leave the task out with --tasks; then run "
              "again with --append and a --tasks list of those left out", file=sys.stderr)
        return 1
    return 0
