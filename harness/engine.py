"""Where evaluations run: `local` (this machine, `--workers` at a time; the default, no Ray needed)
or `ray` (each reference build and evaluation a Ray task, harness/ray_engine.py).

Both grade with the same code (the Ray engine runs the local one on each node), and both write
`node.json` beside every report: the host it ran on and that host's accelerator.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.harness import node_facts
from gpu2tpu.record.targets import DEFAULT_TARGET

ENGINES = ("local", "ray")


@dataclasses.dataclass(frozen=True)
class RayOptions:
    address: str | None = None  # None: start a Ray instance on this machine
    store: str | None = None  # reference store URL or directory (needed when nodes span hosts)
    resources: dict[str, float] | None = None  # per evaluation, instead of the target's
    reference_resources: dict[str, float] | None = None  # per reference build


@dataclasses.dataclass(frozen=True)
class Engine:
    name: str = "local"
    ray: RayOptions = RayOptions()


def add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine", "where evaluations run (default: this machine)")
    g.add_argument("--engine", choices=ENGINES, default="local",
                   help="local: this machine, --workers at a time; ray: one Ray task per reference "
                   "build and per evaluation (pip install 'gpu2tpu[ray]')")
    g.add_argument("--address", help="Ray cluster to join (e.g. 10.0.0.5:6379, or auto); default: "
                   "start Ray on this machine")
    g.add_argument("--reference-store", metavar="URL",
                   help="where nodes share reference bundles: a directory, or an fsspec URL "
                   "(gs://, s3://, hf://); needed when the cluster spans hosts")
    g.add_argument("--ray-resources", metavar="JSON", type=_resources,
                   help='Ray resources per evaluation, e.g. \'{"TPU": 4}\' (default: the target\'s '
                   "chips as TPU for tpu/torchtpu, one CPU for xla-cpu)")
    g.add_argument("--ray-reference-resources", metavar="JSON", type=_resources,
                   help='Ray resources per reference build (default: {"CPU": 1}; docs/tpu.md says '
                   'what {"GPU": 1} needs)')


def _resources(text: str) -> dict[str, float]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc.msg}): give e.g. '{{\"TPU\": 4}}'") from exc
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            for k, v in value.items()):
        raise argparse.ArgumentTypeError('give an object of resource names to non-negative numbers, '
                                         'e.g. \'{"TPU": 4, "CPU": 1}\'')
    return {k: float(v) for k, v in value.items()}


def engine_from_args(args: argparse.Namespace) -> Engine:
    ray_only = [f for f in ("address", "reference_store", "ray_resources", "ray_reference_resources")
                if getattr(args, f, None) is not None]
    if args.engine != "ray" and ray_only:
        raise UserError(f"--{ray_only[0].replace('_', '-')} is for the Ray engine: add --engine ray")
    return Engine(args.engine, RayOptions(args.address, args.reference_store, args.ray_resources,
                                          args.ray_reference_resources))


def run_evaluations(predictions: Path, run_id: str, runs_root: Path = Path("runs"),
                    tasks: list[str] | None = None, workers: int = 1,
                    target_name: str = DEFAULT_TARGET, timeout_s: float | None = None,
                    unsafe: bool = False, engine: Engine | None = None) -> dict[str, Any]:
    """Grade every prediction on the chosen engine; returns this invocation's part of
    summary.json. Bad input is refused before anything runs (UserError, harness/inputs.py); after
    a first Ctrl-C, `Interrupted` (harness/interrupts.py) carries what finished."""
    from gpu2tpu.harness.interrupts import Interrupted

    engine = engine or Engine()
    if engine.name == "ray":
        from gpu2tpu.harness.ray_engine import evaluate_on_ray

        return evaluate_on_ray(predictions, run_id, runs_root, tasks, target_name, timeout_s, unsafe,
                               engine.ray)
    from gpu2tpu.harness.evaluate import evaluate_predictions

    run_dir = Path(runs_root).expanduser() / run_id
    try:
        summary = evaluate_predictions(predictions, run_id, runs_root, tasks, workers, target_name,
                                       timeout_s, unsafe)
    except Interrupted as stopped:
        _write_node_facts(run_dir, stopped.summary["evaluations"])
        raise
    _write_node_facts(run_dir, summary["evaluations"])
    return summary


def _write_node_facts(run_dir: Path, evaluations: list[str]) -> None:
    facts = node_facts.detect()
    for rel in evaluations:
        node_facts.write((run_dir / rel).parent, facts, engine="local")
