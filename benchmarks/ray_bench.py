"""Benchmark: evaluations per minute on the local engine (1 and 2 workers) and on a real Ray
cluster (1 and 2 worker nodes, one evaluation each at a time; one cluster of two nodes, where the
one-node row asks for a resource only the first node has), side by side in one run, and the Ray
engine's own cost per evaluation.

    python benchmarks/ray_bench.py [--task cifar_amp] [--evaluations 4] [--overhead 5,25] [--tiny]

`--tiny` (CI, tests/test_benchmarks.py): every step once at the smallest size, nothing trained: the
throughput rows grade one prediction whose patch does not apply, the overhead 1 and 3 of them.

Throughput: `--evaluations` copies of the task's gold, graded from a warm reference cache (built
once first), so each configuration times candidate runs only.
Overhead: predictions whose patch does not apply (nothing runs, every other step of an evaluation
does: reading, references checked and copied, reports written, the archive moved to the driver),
graded N1 and N2 at a time on each engine; the slope (N2 - N1 evaluations) takes out fixed costs
(connecting to Ray, building the references), and Ray's overhead is its slope minus the local one.
Goal: under 1 s per evaluation.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from gpu2tpu.harness.engine import Engine, RayOptions, run_evaluations
from gpu2tpu.harness.ray_cluster import LoopbackCluster
from gpu2tpu.harness.references import ensure_references
from gpu2tpu.record.targets import get_target
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.materialise import migration_patch

STAND_IN = {"TPU": 1.0}  # each worker node holds one stand-in chip; each evaluation takes one


def _predictions(path: Path, task: str, patch: str, n: int, tag: str) -> Path:
    path.write_text("".join(json.dumps({"schema_version": 1, "task_id": task, "agent": f"{tag}{i}",
                                        "patch": patch}) + "\n" for i in range(n)))
    return path


def _timed(preds: Path, root: Path, run_id: str, workers: int, engine: Engine) -> tuple[float, dict]:
    started = time.monotonic()
    summary = run_evaluations(preds, run_id, root, workers=workers, engine=engine)
    return time.monotonic() - started, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="cifar_amp")
    ap.add_argument("--evaluations", type=int, default=4, help="gold copies per configuration")
    ap.add_argument("--overhead", default="5,25", help="N1,N2 rejected predictions per engine")
    ap.add_argument("--tiny", action="store_true",
                    help="one prediction that does not apply per configuration (nothing runs), overhead 1,3")
    args = ap.parse_args()
    if args.tiny:
        args.evaluations, args.overhead = 1, "1,3"
    n1, n2 = (int(x) for x in args.overhead.split(","))
    spec = find_task(args.task)
    print(f"{args.task}: building references (once)...", file=sys.stderr, flush=True)
    ensure_references(spec, get_target("xla-cpu"), lambda m: print(m, file=sys.stderr, flush=True))
    gold = migration_patch(spec, "gold")
    rejected = "--- a/nowhere.py\n+++ b/nowhere.py\n@@ -1 +1 @@\n-x\n+y\n"
    rows: list[tuple[str, float, int]] = []
    slopes: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-ray-bench-") as tmp:
        root = Path(tmp)
        preds = _predictions(root / "gold.jsonl", args.task, rejected if args.tiny else gold,
                             args.evaluations, "gold-")
        for workers in (1, 2):
            wall, summary = _timed(preds, root / "runs", f"local{workers}", workers, Engine())
            rows.append((f"local, {workers} worker(s)", wall, len(summary["evaluations"])))
        small = _predictions(root / "small.jsonl", args.task, rejected, n1, "r")
        large = _predictions(root / "large.jsonl", args.task, rejected, n2, "r")
        t1, _ = _timed(small, root / "runs", "local-small", 1, Engine())
        t2, _ = _timed(large, root / "runs", "local-large", 1, Engine())
        slopes["local"] = (t2 - t1) / (n2 - n1)
        # one cluster of two worker nodes; "1 worker node" asks for a resource only node 0 has
        nodes = [{"CPU": 1.0, **STAND_IN, f"node{i}": 1.0} for i in range(2)]
        with LoopbackCluster(nodes) as cluster:
            for used in (1, 2):
                only = {"node0": 1.0} if used == 1 else {}
                ray = Engine("ray", RayOptions(address=cluster.address, resources={**STAND_IN, **only}))
                wall, summary = _timed(preds, root / "runs", f"ray{used}", 1, ray)
                rows.append((f"Ray, {used} worker node(s)", wall, len(summary["evaluations"])))
                if used == 1:
                    t1, _ = _timed(small, root / "runs", "ray-small", 1, ray)
                    t2, _ = _timed(large, root / "runs", "ray-large", 1, ray)
                    slopes["ray"] = (t2 - t1) / (n2 - n1)
    what = "a patch that does not apply" if args.tiny else "gold"
    print(f"\n{args.evaluations} evaluations of {args.task}'s {what} per configuration (warm references)")
    print(f"{'configuration':<26} {'wall s':>8} {'evals/min':>10} {'vs local 1':>11}")
    base = rows[0][2] / rows[0][1]
    for name, wall, n in rows:
        print(f"{name:<26} {wall:8.2f} {60 * n / wall:10.2f} {n / wall / base:10.2f}x")
    overhead = slopes["ray"] - slopes["local"]
    print(f"\nper evaluation with nothing to run ({n1} vs {n2} evaluations): local "
          f"{slopes['local']:.2f} s, Ray {slopes['ray']:.2f} s (one node, one at a time)")
    print(f"Ray's overhead per evaluation: {overhead:.2f} s (goal: under 1 s): "
          f"{'met' if overhead < 1 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
