"""Benchmark: probe overhead on XLA and the harness's own overhead per evaluation.

Measured side by side in one run on a practice task's gold migration (XLA CPU device):
  1. steady-state step time with the full probe vs. with a timer-only shim (one optimizer
     post-step hook, nothing else), alternating runs; prints the ratio (target <= 1.02);
  2. for a full `evaluate` of the gold prediction: wall time of the evaluation minus the wall time
     of its two processes (the probed run and evaluate.py); target <= 1 s;
  3. the sandbox's own cost: one process started inside bubblewrap (sandbox/__init__.py, with the
     grader's paths hidden and output through the supervisor's pipes) vs. the same process
     started plainly, times the two processes of an evaluation.

    python benchmarks/harness_overhead.py [--task charlm] [--repeats 5] [--all-cores] [--tiny]

`--tiny` (CI, tests/test_benchmarks.py): one repeat of each measurement, two sandbox starts, and
the references built directly instead of by a first whole evaluation; every step still runs once,
so it takes 1.5-2 minutes on two CPU cores (four XLA runs of the gold migration, at 20-30 s each
mostly start-up and compilation, and three reference runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.targets import get_target
from gpu2tpu.record.workspace import apply_patch
from gpu2tpu.sandbox.process import clean_env
from gpu2tpu.tasks.finder import find_task

TIMER_SHIM = """
import json, runpy, sys, time
from torch.optim.optimizer import register_optimizer_step_post_hook
times = []
register_optimizer_step_post_hook(lambda o, a, k: times.append(time.perf_counter()))
out = sys.argv[1]
sys.argv = sys.argv[2:]
sys.path.insert(0, '.')
try:
    runpy.run_path(sys.argv[0], run_name='__main__')
finally:
    json.dump([b - a for a, b in zip(times, times[1:])], open(out, 'w'))
"""


def steady(times: list[float], warmup: int) -> float:
    return statistics.median(times[warmup:])


def probe_ratio(task: str, repeats: int) -> tuple[float, float, float]:
    spec = find_task(task)
    ws = apply_patch(spec, (spec.task_dir / "migrations" / "gold.patch").read_text())
    env = clean_env(get_target("xla-cpu").env(spec.target_chips))
    command = spec.command_for_seed(spec.seed)
    warm = spec.performance.warmup_steps
    probed, plain = [], []
    try:
        shim = ws.root / "timer_shim.py"
        shim.write_text(TIMER_SHIM)
        for i in range(repeats):
            out = ws.root / f"plain{i}.json"
            subprocess.run(
                [sys.executable, str(shim), str(out), *command],
                cwd=ws.project,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            plain.append(steady(json.loads(out.read_text()), warm))
            res = run_probed(command, ws.project, ws.root / f"probed{i}", env, spec.timeout_s)
            assert res.exit_code == 0, f"probed run failed: see {ws.root / f'probed{i}'}"
            steps = [json.loads(line) for line in (ws.root / f"probed{i}" / "trace.jsonl").open()]
            walls = [s["wall_s"] for s in steps if s["event"] == "step"]
            probed.append(steady(walls[1:], warm))  # step 0's wall time includes start-up
            print(
                f"  repeat {i + 1}: plain {plain[-1] * 1e3:.2f} ms/step, "
                f"probed {probed[-1] * 1e3:.2f} ms/step",
                flush=True,
            )
    finally:
        ws.cleanup()
    p, q = statistics.median(plain), statistics.median(probed)
    paired = statistics.median(b / a for a, b in zip(plain, probed))
    print(f"  median of paired ratios {paired:.3f}")
    return p, q, q / p


def harness_overhead(task: str, warm_evaluation: bool = True) -> tuple[float, float, float]:
    """Wall time of a whole `evaluate` of one prediction (references already cached) minus the
    wall time of the two processes it starts: the harness's own overhead for that evaluation.
    `warm_evaluation=False` (--tiny) caches the references without a first whole evaluation."""
    from gpu2tpu.harness.evaluate import evaluate_predictions
    from gpu2tpu.harness.references import ensure_references
    from gpu2tpu.record.targets import DEFAULT_TARGET

    spec = find_task(task)
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "p.jsonl"
        preds.write_text(json.dumps({"schema_version": 1, "task_id": task, "agent": "gold",
                                     "patch": (spec.task_dir / "migrations" / "gold.patch").read_text()}))
        if warm_evaluation:
            evaluate_predictions(preds, "warm", Path(tmp) / "runs")  # builds the cached references
        else:
            ensure_references(spec, get_target(DEFAULT_TARGET), print)
        start = time.monotonic()
        evaluate_predictions(preds, "bench", Path(tmp) / "runs")
        total = time.monotonic() - start
        eval_dir = Path(tmp) / "runs" / "bench" / "gold" / task
        proc = json.loads((eval_dir / "process.json").read_text())["wall_s"]
        goal = json.loads((eval_dir / "goal.json").read_text()).get("wall_s", 0.0)
    return total, proc + goal, total - proc - goal


def sandbox_cost(repeats: int) -> tuple[float, float]:
    """Median wall time of `python -c pass` started plainly and inside the sandbox."""
    from gpu2tpu.sandbox import Limits, run
    from gpu2tpu.sandbox.process import confinement

    argv = [sys.executable, "-c", "pass"]
    plain, boxed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for _ in range(repeats):
            start = time.monotonic()
            subprocess.run(argv, cwd=work, check=True, capture_output=True)
            plain.append(time.monotonic() - start)
            start = time.monotonic()
            res = run(argv, work, clean_env(), confinement([work], []), Limits(timeout_s=60),
                      work / "out.log", work / "err.log")
            boxed.append(time.monotonic() - start)
            assert res.exit_code == 0 and res.sandbox == "bwrap", (work / "err.log").read_text()
    return statistics.median(plain), statistics.median(boxed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="charlm")
    parser.add_argument("--repeats", type=int, help="alternating probe runs (default 5; --tiny 1)")
    parser.add_argument("--tiny", action="store_true",
                        help="each measurement once, references built without a first evaluation (CI)")
    parser.add_argument("--sandbox-only", action="store_true", help="measure only the sandbox's cost")
    parser.add_argument("--all-cores", action="store_true",
                        help="do not pin the runs to one core (pinning cuts scheduling noise)")
    args = parser.parse_args()
    if args.repeats is None:
        args.repeats = 1 if args.tiny else 5
    if not args.all_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # inherited by every run
    os.environ.setdefault("GPU2TPU_CACHE", tempfile.mkdtemp(prefix="gpu2tpu-bench-cache-"))
    plain_s, boxed_s = sandbox_cost(2 if args.tiny else max(5, args.repeats * 2))
    print(f"process start: plain {plain_s * 1e3:.0f} ms, in the sandbox {boxed_s * 1e3:.0f} ms: "
          f"sandbox cost {(boxed_s - plain_s) * 1e3:.0f} ms per process, "
          f"{2 * (boxed_s - plain_s) * 1e3:.0f} ms per evaluation (two processes)")
    if args.sandbox_only:
        return
    print(f"probe overhead on {args.task} (gold migration, XLA CPU), {args.repeats} alternating repeats")
    plain, probed, ratio = probe_ratio(args.task, args.repeats)
    print(
        f"steady-state step time: plain {plain * 1e3:.2f} ms, probed {probed * 1e3:.2f} ms, "
        f"ratio {ratio:.3f} (target <= 1.02)"
    )
    total, processes, overhead = harness_overhead(args.task, warm_evaluation=not args.tiny)
    print(
        f"evaluation of the gold prediction: {total:.2f} s in all, {processes:.2f} s in its two "
        f"processes, harness overhead {overhead:.2f} s (target <= 1 s)"
    )


if __name__ == "__main__":
    main()
