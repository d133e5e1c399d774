"""What grading the current task set once per agent costs on each TPU generation in the price table.

    python benchmarks/tpu_cost.py [--attempts 1]

Per task, a candidate's chip time is taken as its gold's wall time on the task's chips, read from
the task's reference bundle in this machine's cache (built by `gpu2tpu validate` or `evaluate`):
measured on the emulated target (torch_xla on this CPU), so an estimate until TPU runs are
recorded; the harness stops a candidate at the task's time limit, which bounds it. References run
once per task and are shared by every agent: their cost is listed apart (CPU: not billed; CUDA: one
GPU per seed run). Tasks with no bundle in the cache are named, not guessed.
"""

from __future__ import annotations

import argparse
import json
import sys

from gpu2tpu.harness.ref_store import COMPLETE, local_bundle
from gpu2tpu.harness.references import reference_key
from gpu2tpu.leaderboard.prices import latest_version, load_prices
from gpu2tpu.record.targets import get_target
from gpu2tpu.tasks.finder import find_task, list_tasks


def _wall(path) -> float:
    return float(json.loads(path.read_text()).get("wall_s") or 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=1, help="attempts per task (default 1)")
    args = ap.parse_args()
    target = get_target("xla-cpu")
    chip_s = reference_s = 0.0
    measured, missing = [], []
    for task_id in list_tasks():
        spec = find_task(task_id)
        bundle = local_bundle(task_id, reference_key(spec, target))
        if not (bundle / COMPLETE).exists():
            missing.append(task_id)
            continue
        chip_s += _wall(bundle / "gold" / "process.json") * spec.target_chips
        reference_s += sum(_wall(bundle / f"seed-{s}" / "process.json") for s in spec.seeds)
        measured.append(task_id)
    prices = load_prices()
    version = latest_version(prices)
    rows = [p for p in prices if p.price_version == version]
    hours = chip_s * args.attempts / 3600
    print(f"{len(measured)} task(s) measured, {args.attempts} attempt(s) each: {hours:.2f} chip-hours "
          f"of candidates per agent; references {reference_s / 3600:.2f} h once per task set")
    print("\n| accelerator | USD per chip-hour | candidates per agent (USD) | price source |")
    print("|---|---:|---:|---|")
    for p in rows:
        if p.accelerator.startswith("tpu-"):
            print(f"| {p.accelerator} | {p.usd_per_chip_hour:.2f} | {hours * p.usd_per_chip_hour:.2f} "
                  f"| {p.source_url} ({p.retrieved_on}) |")
    for p in rows:
        if p.accelerator.startswith("gpu-"):
            print(f"| references on {p.accelerator} (once) | {p.usd_per_chip_hour:.2f} | "
                  f"{reference_s / 3600 * p.usd_per_chip_hour:.2f} | {p.source_url} ({p.retrieved_on}) |")
    if missing:
        print(f"\nnot measured (no reference bundle in this cache): {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
