"""`gpu2tpu agent run` (the baseline migration agent) and `gpu2tpu agent prices`."""

from __future__ import annotations

import argparse
import os
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

from gpu2tpu.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    """Add `agent` and its subcommands to the `gpu2tpu` parser."""
    agent = sub.add_parser(
        "agent",
        help="run the baseline migration agent (Anthropic API)",
        description="The baseline migration agent: a short tool-use loop on the Anthropic "
        "Messages API that migrates each task's project to torch_xla and writes predictions "
        "for `gpu2tpu evaluate`.",
    )
    asub = agent.add_subparsers(dest="agent_command", metavar="SUBCOMMAND")
    agent.set_defaults(func=lambda args: agent.print_help() or 2)

    run = asub.add_parser(
        "run",
        help="migrate tasks and write predictions",
        description="For each task and attempt: copy the task's project (no history) to a fresh "
        "working directory, let the model migrate it with tools, and append one prediction "
        "line (the diff, cost, tokens, human interventions) to --out. A trajectory JSON per "
        "task and attempt goes to --trajectory-dir. The API key is read from the environment "
        "(ANTHROPIC_API_KEY unless --api-key-env says otherwise) and never written anywhere.",
    )
    run.add_argument("--tasks", nargs="+", required=True, metavar="ID", help="task ids")
    run.add_argument("--model", required=True, help="Anthropic model id, e.g. claude-sonnet-4-5")
    run.add_argument("--out", required=True, type=Path, help="predictions JSONL to write")
    run.add_argument("--task-dir", type=Path, default=None, metavar="DIR",
                     help="directory holding the task directories (default: the installed tasks)")
    run.add_argument("--tasks-dir", dest="task_dir", type=Path, help=argparse.SUPPRESS)  # old name
    run.add_argument("--max-steps", type=int, default=50, help="model calls per attempt (50)")
    run.add_argument("--cost-limit", type=str, default="5",
                     help="USD per attempt; checked before every model call (default 5)")
    run.add_argument("--total-cost-limit", type=str, default=None,
                     help="USD for the whole run; checked before every model call")
    run.add_argument("--human", default="never",
                     help="ask (answer on the terminal), never (no help; default), or "
                     "script:FILE (a YAML/JSON list of answers, replayed in order)")
    run.add_argument("--attempts", type=int, default=1, help="independent attempts per task")
    run.add_argument("--price-per-mtok", default=None, metavar="IN,OUT[,CW,CR]",
                     help="USD per million input,output[,cache-write,cache-read] tokens; "
                     "needed for models missing from the price table")
    run.add_argument("--prices", type=Path, default=None,
                     help="price table YAML (default: the one shipped with gpu2tpu)")
    run.add_argument("--agent-name", default="gpu2tpu-baseline",
                     help="the `agent` field of the predictions")
    run.add_argument("--max-tokens", type=int, default=8192, help="output tokens per call")
    run.add_argument("--trajectory-dir", type=Path, default=None,
                     help="where trajectories go (default: traj/ next to --out)")
    run.add_argument("--base-url", default=None, help="Messages API base URL (default: SDK's)")
    run.add_argument("--api-key-env", default="ANTHROPIC_API_KEY",
                     help="environment variable holding the API key")
    run.add_argument("--command-timeout", type=int, default=120,
                     help="default time limit (s) of the agent's shell commands")
    run.add_argument("--isolation", choices=("auto", "namespace", "none"), default="auto",
                     help="run the agent's commands in the harness sandbox (bubblewrap: no "
                     "network, read-only install, task directories, cache, $HOME and runs hidden): "
                     "auto (when available), namespace (required), none")
    run.add_argument("--hide", type=Path, action="append", default=[],
                     help="another path the agent's commands must not see (repeatable); the "
                     "task directories, their repository's .git, --out, the trajectory dir and "
                     "./runs are always hidden")
    run.add_argument("--work-dir", type=Path, default=None,
                     help="parent of the working copies (default: the system temp dir)")
    run.add_argument("--keep-work", action="store_true", help="keep the working copies")
    run.add_argument("--append", action="store_true", help="append to an existing --out")
    run.set_defaults(func=cmd_run)

    prices = asub.add_parser("prices", help="show the model price table",
                             description="Print the model price table the agent charges by.")
    prices.add_argument("--prices", type=Path, default=None, help="price table YAML")
    prices.set_defaults(func=cmd_prices)
    __import__("gpu2tpu.agent.baseline_cli", fromlist=["register"]).register(asub)  # agent baseline


def _usd(text: str | None, flag: str) -> Decimal | None:
    if text is None or text.lower() == "none":
        return None
    try:
        value = Decimal(text)
    except InvalidOperation as exc:
        raise UserError(f"{flag} {text!r}: give an amount in USD, e.g. 2.5") from exc
    if not value.is_finite() or value <= 0:
        raise UserError(f"{flag} {text!r}: must be a positive amount in USD")
    return value


AGENT_EXTRA = ('the agent needs the `agent` extra (the anthropic package): pip install -e ".[agent]" '
               'in a checkout, or pip install "gpu2tpu[agent]"')


def require_agent_extra() -> None:
    """One line instead of a ModuleNotFoundError traceback when the extra is not installed."""
    try:
        import anthropic  # noqa: F401
    except ImportError as exc:
        raise UserError(AGENT_EXTRA) from exc


def cmd_run(args: argparse.Namespace) -> int:
    require_agent_extra()
    from gpu2tpu.agent import commands
    from gpu2tpu.agent.human import parse_human
    from gpu2tpu.agent.loop import AgentConfig
    from gpu2tpu.agent.pricing import price_for
    from gpu2tpu.agent.runner import RunPlan, make_client, run_agent
    from gpu2tpu.agent.task import load_task
    from gpu2tpu.tasks import TASKS_DIR

    if args.max_steps < 1 or args.attempts < 1 or args.max_tokens < 1:
        raise UserError("--max-steps, --attempts and --max-tokens must be at least 1")
    # Everything that can be wrong is checked before the first (paid) call.
    price = price_for(args.model, args.price_per_mtok, args.prices)
    human = parse_human(args.human)
    tasks_dir = (args.task_dir or TASKS_DIR).resolve()
    tasks = [load_task(tasks_dir, t) for t in args.tasks]
    api_key = os.environ.get(args.api_key_env, "")
    if not api_key:
        raise UserError(f"no API key: set {args.api_key_env} (or pass --api-key-env NAME)")
    isolate = args.isolation != "none" and commands.namespace_available()
    if args.isolation == "namespace" and not isolate:
        raise UserError("--isolation namespace: bubblewrap (bwrap) is not available here: install "
                        "it (apt-get install -y bubblewrap) or use --isolation none to run the "
                        "agent's commands unisolated")
    if args.isolation == "auto" and not isolate:
        print("gpu2tpu: warning: no sandbox (bwrap) here; the agent's commands can read "
              "the task directories (trajectories record isolation: none)", file=sys.stderr)
    # Also hidden: earlier attempts (trajectories, predictions) and evaluation runs (./runs).
    traj_dir = args.trajectory_dir or args.out.parent / "traj"
    traj_dir.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.touch()
    extra = [*args.hide, traj_dir, args.out, *([Path("runs")] if Path("runs").is_dir() else [])]
    cfg = AgentConfig(
        model=args.model, agent_name=args.agent_name, max_steps=args.max_steps,
        max_tokens=args.max_tokens, command_timeout_s=args.command_timeout, isolate=isolate,
        hide=commands.hidden_paths([tasks_dir], extra), work_root=args.work_dir,
        keep_work=args.keep_work,
    )
    plan = RunPlan(
        tasks=tasks, attempts=args.attempts, out=args.out, trajectory_dir=traj_dir,
        cost_limit_usd=_usd(args.cost_limit, "--cost-limit"),
        total_cost_limit_usd=_usd(args.total_cost_limit, "--total-cost-limit"), append=args.append,
    )
    client = make_client(api_key, args.base_url)
    preds = run_agent(client, cfg, plan, price, human, secrets=[api_key])
    failed = sum(1 for p in preds if p.get("error"))
    print(f"wrote {len(preds)} predictions to {args.out} ({failed} with errors); "
          f"cost ${sum(p['agent_cost_usd'] for p in preds):.4f}")
    return 0


def cmd_prices(args: argparse.Namespace) -> int:
    from gpu2tpu.agent.pricing import PRICE_TABLE, PriceTable

    table = PriceTable.load(args.prices or PRICE_TABLE)
    print(f"price table {table.version} (source {table.source}, retrieved {table.retrieved}); "
          "USD per million tokens")
    print(f"{'model':<22}{'input':>8}{'output':>8}{'cache_w':>9}{'cache_w1h':>10}{'cache_r':>9}")
    for name in sorted(table.models):
        p = table.price(name)
        print(f"{name:<22}{p.input:>8}{p.output:>8}{p.cache_write:>9}{p.cache_write_1h:>10}"
              f"{p.cache_read:>9}")
    return 0
