"""The Ray engine: every reference build and every evaluation is a Ray task.

The driver reads the predictions, has each task's references built once (on a node with the
reference's resources, shared through the reference store), then sends one Ray task per
prediction with the target's resources (`TPU` chips for a TPU target, CPUs for `xla-cpu`, or what
`--ray-resources` says). Each runs the local engine unchanged on its node (harness/ray_tasks.py);
the evaluation's folder streams back into the run directory as it finishes. A task lost with its
worker or node is retried once by Ray, then recorded `infra`; nothing is written twice, and a
rerun reuses every finished evaluation whose cache key still matches.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from gpu2tpu.errors import UserError
from gpu2tpu.harness import node_facts, ray_tasks
from gpu2tpu.harness.engine import RayOptions
from gpu2tpu.harness.evaluate import _report, log
from gpu2tpu.harness.inputs import check_request, select
from gpu2tpu.harness.predictions import Prediction
from gpu2tpu.harness.progress import Progress
from gpu2tpu.harness.ref_store import ReferenceStore, local_bundle
from gpu2tpu.harness.references import copy_references
from gpu2tpu.harness.run_dir import STAGING, refresh_summary, write_summary
from gpu2tpu.judge.verdict import infra_verdict
from gpu2tpu.record.report import REPORT, Report, RunLayout
from gpu2tpu.record.targets import Target, get_target
from gpu2tpu.tasks.finder import TASK_DIRS_ENV
from gpu2tpu.tasks.spec import RunSpec

# Variables that say where tasks and their sources are: forwarded to the workers.
_FORWARDED_ENV = (TASK_DIRS_ENV, "GPU2TPU_SOURCES")


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError("the Ray engine needs Ray on this machine and every node: "
                        "pip install 'gpu2tpu[ray]'") from None
    return ray


def task_options(resources: dict[str, float]) -> dict[str, Any]:
    """Ray's remote options for a resource dict ({"CPU": 1, "GPU": 1, "TPU": 4, ...})."""
    rest = {k: float(v) for k, v in resources.items() if k not in ("CPU", "GPU")}
    return {"num_cpus": float(resources.get("CPU", 1)), "num_gpus": float(resources.get("GPU", 0)),
            "resources": rest, "max_retries": 1, "retry_exceptions": False}


def candidate_resources(spec: RunSpec, target: Target, options: RayOptions) -> dict[str, float]:
    """A TPU target takes the task's chips on one node (one slice); the emulated one, a CPU."""
    if options.resources is not None:
        return dict(options.resources)
    return {"CPU": 1.0} if target.emulated else {"CPU": 1.0, "TPU": float(spec.target_chips)}


def reference_resources(options: RayOptions) -> dict[str, float]:
    """A CPU, unless told otherwise (`{"GPU": 1}` for CUDA references: see docs/tpu.md for what
    that needs today)."""
    return dict(options.reference_resources) if options.reference_resources is not None else {"CPU": 1.0}


def _line(pred: Prediction) -> dict[str, Any]:
    line: dict[str, Any] = {"schema_version": 1, "task_id": pred.task_id, "agent": pred.agent,
                            **{k: v for k, v in pred.fields.items() if v is not None},
                            "attempt": pred.attempt}
    if pred.patch is not None:
        line["patch"] = pred.patch
    else:
        line["migrated_dir"] = "."  # replaced by the unpacked tree on the worker
    return line


def _hosts(ray: Any) -> set[str]:
    return {n.get("NodeManagerAddress") for n in ray.nodes() if n.get("Alive")}


def evaluate_on_ray(predictions: Path, run_id: str, runs_root: Path, tasks: list[str] | None,
                    target_name: str, timeout_s: float | None, unsafe: bool,
                    options: RayOptions) -> dict[str, Any]:
    """`evaluate_predictions`, with each evaluation a Ray task; returns this invocation's part of
    summary.json (which lists every evaluation in the run directory, harness/run_dir.py). A Ctrl-C
    cancels every Ray task at once; what streamed back stays listed."""
    check_request(run_id, 1, timeout_s)
    chosen = select(Path(predictions), tasks)  # the whole file checked before Ray starts
    preds, specs = chosen.predictions, chosen.specs
    ray = _ray()
    target = get_target(target_name)
    layout = RunLayout(Path(runs_root).expanduser().absolute() / run_id)
    layout.root.mkdir(parents=True, exist_ok=True)
    env = {k: os.environ[k] for k in _FORWARDED_ENV if os.environ.get(k)}
    ray.init(address=options.address, log_to_driver=False, ignore_reinit_error=True,
             runtime_env={"env_vars": env} if env else None)
    try:
        if options.store is None and len(_hosts(ray)) > 1:
            raise UserError(f"the Ray cluster spans {len(_hosts(ray))} hosts: give --reference-store "
                            "URL (a bucket or shared folder every node can reach) so all of them "
                            "grade against the same references")
        ready = _build_references(ray, specs, target, options, layout)
        reports = _evaluate(ray, preds, specs, ready, target, timeout_s, unsafe, options, layout)
    except KeyboardInterrupt:
        refresh_summary(layout)  # what streamed back before the interrupt stays listed
        raise
    finally:
        ray.shutdown()
    return write_summary(layout, reports, [])


def _build_references(ray: Any, specs: dict[str, RunSpec], target: Target, options: RayOptions,
                      layout: RunLayout) -> dict[str, str | None]:
    """Each task's reference key once its bundle is in the run directory (None: it failed)."""
    build = ray.remote(ray_tasks.build_references)
    opts = task_options(reference_resources(options))
    pending = {build.options(**opts).remote(t, s.content_hash, target.name, options.store): t
               for t, s in specs.items()}
    ready: dict[str, str | None] = {}
    store = ReferenceStore(options.store) if options.store else None
    waiting = list(pending)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        task_id = pending.pop(done[0])
        try:
            result = ray.get(done[0])
        except Exception as exc:
            log(f"{task_id}: references could not be built on Ray ({_short(exc)}): its evaluations are infra")
            ready[task_id] = None
            continue
        for message in result["messages"]:
            log(message)
        key = result["key"]
        cached = (store.fetch(task_id, key) if store else None) or local_bundle(task_id, key)
        if not cached.exists():
            raise UserError(f"{task_id}: its references were built on {result['node']['hostname']} at "
                            f"{result['bundle']}, which this driver cannot read: give --reference-store "
                            "(a folder or bucket every node and the driver reach), or the same "
                            "GPU2TPU_CACHE to every node on this host")
        if not (cached / "complete").exists():
            log(f"{task_id}: its reference or gold run failed on {result['node']['hostname']}: "
                "its evaluations are infra")
            ready[task_id] = None
            continue
        copy_references(cached, layout.references(key))
        ready[task_id] = key
        log(f"{task_id}: references {key} ready (built on {result['node']['hostname']})")
    return ready


def _evaluate(ray: Any, preds: list[Prediction], specs: dict[str, RunSpec], ready: dict[str, str | None],
              target: Target, timeout_s: float | None, unsafe: bool, options: RayOptions,
              layout: RunLayout) -> list[Report]:
    run = ray.remote(ray_tasks.evaluate_one)
    reports: list[Report] = []
    pending: dict[Any, Prediction] = {}
    for pred in preds:
        spec = specs[pred.task_id]
        if ready.get(pred.task_id) is None:
            reports.append(_infra(spec, pred, layout, target, "the task's references could not be built"))
            continue
        eval_dir = layout.evaluation(pred.agent, pred.task_id, pred.attempt)
        job = {"line": _line(pred), "task_hash": spec.content_hash, "reference_key": ready[pred.task_id],
               "run_id": layout.run_id,
               "target": target.name, "timeout_s": timeout_s, "unsafe": unsafe, "store": options.store,
               "tree": ray_tasks.pack(Path(pred.migrated_dir)) if pred.migrated_dir else None,
               "previous": ray_tasks.pack(eval_dir) if (eval_dir / REPORT).is_file() else None}
        opts = task_options(candidate_resources(spec, target, options))
        pending[run.options(**opts).remote(job)] = pred
    progress, waiting = Progress(len(preds)), list(pending)
    try:
        while waiting:  # the list Ray hands back, not a new one per result (160k at full scale)
            done, waiting = ray.wait(waiting, num_returns=1)
            pred = pending.pop(done[0])
            reports.append(_collect(ray, done[0], pred, specs[pred.task_id], layout, target))
            progress.done(len(reports))
            log(progress.line(f"{pred.label}: {reports[-1].outcome}"))
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    return reports


def _collect(ray: Any, ref: Any, pred: Prediction, spec: RunSpec, layout: RunLayout,
             target: Target) -> Report:
    """Write one finished evaluation into the run directory (its only write there)."""
    try:
        result = ray.get(ref)
    except Exception as exc:  # lost twice (worker or node), or the harness failed on the node
        return _infra(spec, pred, layout, target, f"evaluation failed on Ray: {_short(exc)}")
    eval_dir = layout.evaluation(pred.agent, pred.task_id, pred.attempt)
    staging = eval_dir.with_name(eval_dir.name + STAGING)
    shutil.rmtree(staging, ignore_errors=True)
    ray_tasks.unpack(result["files"], staging)
    node_facts.write(staging, result["node"], engine="ray")
    shutil.rmtree(eval_dir, ignore_errors=True)
    os.replace(staging, eval_dir)
    return Report.load(eval_dir / REPORT)


def _infra(spec: RunSpec, pred: Prediction, layout: RunLayout, target: Target, reason: str) -> Report:
    eval_dir = layout.evaluation(pred.agent, pred.task_id, pred.attempt)
    shutil.rmtree(eval_dir, ignore_errors=True)
    eval_dir.mkdir(parents=True)
    report = _report(spec, pred, layout, target, verdict=infra_verdict(reason))
    report.write(eval_dir / REPORT)
    return report


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"[:300]
