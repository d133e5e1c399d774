"""Executing runs: one probed run plus its goal metric, and the cached reference bundle
(original code on the reference device over several seeds, and the gold migration on the target)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from gpu2tpu.record.calibration import (
    CALIBRATE_ENV,
    CALIBRATION,
    moves_step0,
    start_variants,
    variants,
)
from gpu2tpu.record.first_batch import gold_first_batch_deviation
from gpu2tpu.record.kernel_view import observer_for
from gpu2tpu.record.report import (
    GOAL,
    GOLD,
    KERNEL,
    MANIFEST_SCHEMA,
    PROCESS,
    RUN_FILE_SCHEMA,
    TRACE,
    hash_file,
    seed_dir,
    write_json,
)
from gpu2tpu.record.runner import provenance, run_probed
from gpu2tpu.record.sealed import SOURCES_ONLY, snapshot_sources
from gpu2tpu.record.targets import Target, reference_env
from gpu2tpu.record.trace import Trace
from gpu2tpu.record.workspace import Workspace, apply_patch, fresh_copy
from gpu2tpu.sandbox.process import budget_record, clean_env, confinement, isolated_python, run_process
from gpu2tpu.tasks.materialise import migration_patch, original_tree
from gpu2tpu.tasks.recipe import apply_recipe
from gpu2tpu.tasks.spec import RunSpec, task_content_hash

Progress = Callable[[str], None]
MODEL_STATE = "gpu2tpu_model_state.pt"  # beside the project tree, written by the probe
SEED_OFFSET_ENV = "GPU2TPU_SEED_OFFSET"
REFERENCE_CPU_RECIPE = "reference_cpu.py"  # see adapt_reference


def reference_device() -> str:
    """`cuda` where this machine has a CUDA device, else `cpu` (chooses the task's reference_args)."""
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except Exception:
        return "cpu"


def runtime_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("torch", "torch_xla", "torch_tpu", "libtpu"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def adapt_reference(spec: RunSpec, ws: Workspace) -> str | None:
    """On a machine without CUDA, a project that hard-codes CUDA (no switch of its own) runs its
    reference through the task's `migrations/reference_cpu.py` recipe (the least edit that puts
    it on the CPU); returns that recipe's name, recorded in process.json, or None."""
    recipe = spec.task_dir / "migrations" / REFERENCE_CPU_RECIPE
    if reference_device() != "cpu" or not recipe.is_file():
        return None
    apply_recipe(recipe, ws.project)
    return f"migrations/{REFERENCE_CPU_RECIPE}"


def run_setup(spec: RunSpec, ws: Workspace, seed: int,
              target: Target | None) -> tuple[dict[str, str], list[str]]:
    """The environment and command of one run of the task in `ws` (target None: the reference)."""
    env = clean_env(target.env(spec.target_chips) if target else reference_env())
    command = spec.command_for_seed(seed)
    if target is None:  # the reference device: the project's own switch for it, if any
        command += list(spec.reference_args.get(reference_device(), ()))
    if spec.harness_seed:
        env["GPU2TPU_SEED"] = str(seed)
    elif spec.seed_offset(seed):
        env[SEED_OFFSET_ENV] = str(spec.seed_offset(seed))
    if spec.upstream:  # the project importable as if installed (`pip install -e .`), as upstream
        env["PYTHONPATH"] = str(ws.project)
    return env, command


def run_calibration(spec: RunSpec, building: Path, progress: Progress,
                    runs: list[tuple[str, str]] | None = None) -> None:
    """The reference's first step again under each calibration variant (record/calibration.py;
    `runs`, default `variants(spec)`), into building/calibration/<variant>/. A variant that fails
    only leaves its tolerance at the task's floor: it never fails the bundle. Where a series' first
    draw moves nothing (a deterministic step 0), its other draws are not run."""
    reference = Trace.load(building / seed_dir(spec.seed) / TRACE)
    todo = variants(spec) if runs is None else runs
    for name, mode in todo:
        series = name.rsplit("-", 1)[0] + "-"
        first = f"{series}1"
        if mode != "bf16" and name != first and \
                not moves_step0(reference, Trace.load(building / CALIBRATION / first / TRACE)):
            continue  # the generator never reaches step 0: more draws would measure nothing
        progress(f"{spec.task_id}: calibration run {name}")
        out_dir = building / CALIBRATION / name
        ws = fresh_copy(spec)
        try:
            adapted = adapt_reference(spec, ws)
            env, command = run_setup(spec, ws, spec.seed, None)
            env[CALIBRATE_ENV] = mode
            result = run_probed(command, ws.project / spec.workdir, out_dir, env, spec.timeout_s,
                                probe_dir=ws.root)
        finally:
            ws.cleanup()
        write_json(out_dir / PROCESS, {"schema_version": RUN_FILE_SCHEMA, **provenance(), "mode": mode,
                                       "exit_code": result.exit_code, "timed_out": result.timed_out,
                                       "wall_s": round(result.wall_s, 3),
                                       "reference_adapted_by": adapted})


def trains_on_another_batch(spec: RunSpec, building: Path) -> bool:
    """Whether the gold's first training input is not the reference's (its data, noise or rollout
    draws from the device's generator): its step 0 is then judged by the start draws."""
    try:
        ref, gold = (Trace.load(building / d / TRACE) for d in (seed_dir(spec.seed), GOLD))
    except (OSError, ValueError):
        return False
    return gold_first_batch_deviation(ref, gold) > spec.tolerances.init_input_tol


def time_limit(spec: RunSpec, gold_wall_s: float | None = None,
               override_s: float | None = None) -> dict[str, Any]:
    """A run's time limit and where it came from, recorded in its process.json (the judge reads
    it and never recomputes it, so `evaluate`, `report` and the leaderboard name a stop alike):
    `gold` (time_limit_gold_factor x the gold's wall time: a run stopped there is slow), `task`
    (the task's timeout_s cap: a run stopped there hung) or `--timeout` (the caller's cap)."""
    own = spec.time_limit(gold_wall_s)
    if override_s is not None and override_s < own:
        return {"time_s": float(override_s), "from": "--timeout"}
    if own < spec.timeout_s:
        factor = max(spec.performance.time_limit_gold_factor, spec.performance.step_time_budget)
        return {"time_s": own, "from": "gold", "gold_wall_s": gold_wall_s, "gold_factor": factor}
    return {"time_s": spec.timeout_s, "from": "task"}


def run_and_record(spec: RunSpec, ws: Workspace, out_dir: Path, seed: int,
                   target: Target | None, adapted: str | None = None,
                   limit: dict[str, Any] | None = None) -> dict:
    """Run the task command in `ws` under the probe, then the harness-owned goal metric, within
    `limit` (`time_limit`; default the task's own cap).

    Writes trace.jsonl, stdout.log, stderr.log, process.json, kernel.json (what the kernel saw of
    the run, recorded from outside it: record/kernel_view.py) and goal.json into `out_dir`."""
    env, command = run_setup(spec, ws, seed, target)
    model = ws.root / MODEL_STATE if spec.checkpoint is None else None
    workdir = ws.project / spec.workdir
    kernel = observer_for(target)
    limit = limit or time_limit(spec)
    # evaluate.py and its task files are copied, and checked against the task's hash, before the
    # candidate starts: nothing it could have touched is read afterwards
    sources = snapshot_sources(spec.task_dir, spec.content_hash, task_content_hash)
    try:
        result = run_probed(command, workdir, out_dir, env, float(limit["time_s"]),
                            probe_dir=ws.root, save_model=model, observer=kernel)
        goal = measure_goal(spec, ws, out_dir, sources)
    finally:
        shutil.rmtree(sources.parent, ignore_errors=True)
    write_json(out_dir / KERNEL, {**kernel.result(), **provenance()})
    process = {"schema_version": RUN_FILE_SCHEMA, **provenance(), "exit_code": result.exit_code,
               "timed_out": result.timed_out, "wall_s": round(result.wall_s, 3),
               "cpu_s": round(result.cpu_s, 3) if result.cpu_s is not None else None,
               "others_cpu_share": result.others_share,
               "sandbox": result.sandbox, "output_truncated": list(result.truncated),
               "target": target.name if target else None,
               "seed": seed, "cwd": os.path.realpath(workdir), "reference_adapted_by": adapted,
               "time_limit": limit, **budget_record(result)}
    write_json(out_dir / PROCESS, process)
    write_json(out_dir / GOAL, goal)
    return process


def measure_goal(spec: RunSpec, ws: Workspace, out_dir: Path, sources: Path) -> dict:
    """The task's evaluate.py on the checkpoint (`isolated_python`), from a fresh copy of
    `sources` (the task's sources, taken before the run: record/sealed.py), sandboxed with only
    that copy writable. Upstream
    tasks also get a fresh copy of the pristine, prepared tree (`--project`)."""
    checkpoint = ws.project / spec.checkpoint if spec.checkpoint else ws.root / MODEL_STATE
    base = {"schema_version": RUN_FILE_SCHEMA, **provenance(), "metric": spec.goal.metric, "value": None}
    inside = checkpoint.resolve().is_relative_to(ws.root.resolve())
    if not checkpoint.is_file() or checkpoint.is_symlink() or not inside:
        what = spec.checkpoint or "the trained model's state_dict (saved by the probe)"
        return {**base, "error": f"checkpoint {what} was not written (as a regular file inside the "
                "workspace)"}
    scratch = Path(tempfile.mkdtemp(prefix=f"gpu2tpu-goal-{spec.task_id}-"))
    try:
        task = scratch / "task"
        shutil.copytree(sources, task, ignore=SOURCES_ONLY)
        shutil.copyfile(checkpoint, scratch / "checkpoint")
        goal_file = scratch / "goal.raw.json"
        argv = isolated_python(task / "evaluate.py", "--checkpoint", str(scratch / "checkpoint"),
                               "--out", str(goal_file))
        if spec.upstream:  # the model and held-out data come from the pristine, prepared tree
            shutil.copytree(original_tree(spec), scratch / "project", symlinks=True,
                            ignore=SOURCES_ONLY)
            argv += ["--project", str(scratch / "project")]
        box = confinement([scratch], [out_dir])
        res = run_process(argv, task, out_dir, clean_env(), 300, log_name="evaluate", box=box)
        base["wall_s"] = round(res.wall_s, 3)
        if res.exit_code != 0 or not goal_file.is_file():
            tail = (out_dir / "evaluate.stderr.log").read_text(errors="replace").strip().splitlines()
            return {**base, "error": f"evaluate.py failed (exit {res.exit_code}): "
                    f"{tail[-1] if tail else 'no output'}"}
        data = json.loads(goal_file.read_text())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    why = data.get("error")  # evaluate.py may say why a checkpoint has no value
    return {**base, "value": data.get("value"), **({"error": str(why)[:300]} if why else {})}


MANIFEST = "manifest.json"
COMPLETE = "complete"  # written into a bundle whose runs all exited 0, with the facts it was built from


def write_manifest(root: Path) -> dict[str, str]:
    """Hash every file of a reference bundle into root/manifest.json (written at build time)."""
    hashes = {p.relative_to(root).as_posix(): hash_file(p) for p in sorted(root.rglob("*"))
              if p.is_file() and p.name != MANIFEST}
    write_json(root / MANIFEST, {"schema_version": MANIFEST_SCHEMA, "files": hashes})
    return hashes


def verify_manifest(root: Path) -> dict[str, str] | None:
    """The bundle's file hashes when every file matches its manifest (no file added, missing or
    changed, no links); None when it does not."""
    try:
        want = json.loads((root / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    entries = [p for p in root.rglob("*") if p.name != MANIFEST]
    if any(p.is_symlink() or not (p.is_file() or p.is_dir()) for p in entries):
        return None
    have = {p.relative_to(root).as_posix(): hash_file(p) for p in sorted(entries) if p.is_file()}
    return have if have == want else None


def build_bundle(spec: RunSpec, target: Target, building: Path, facts: dict, progress: Progress) -> list[int]:
    """Run a reference bundle into `building`: the original code on the reference device for each
    of the task's seeds, the calibration runs, the gold migration on `target`. Writes `complete`
    (with `facts`: what the bundle was built from) only when every run exited 0, then the
    manifest; returns the runs' exit codes."""
    codes = []
    for seed in spec.seeds:
        progress(f"{spec.task_id}: reference run, seed {seed}")
        ws = fresh_copy(spec)
        try:
            adapted = adapt_reference(spec, ws)
            codes.append(run_and_record(spec, ws, building / seed_dir(seed), seed, None,
                                        adapted)["exit_code"])
        finally:
            ws.cleanup()
    run_calibration(spec, building, progress)
    progress(f"{spec.task_id}: gold migration on {target.name}")
    ws = apply_patch(spec, migration_patch(spec, "gold"))
    try:
        codes.append(run_and_record(spec, ws, building / GOLD, spec.seed, target)["exit_code"])
    finally:
        ws.cleanup()
    if trains_on_another_batch(spec, building):
        run_calibration(spec, building, progress, start_variants())
    if all(code == 0 for code in codes):  # a failed bundle is used once (graded infra), never cached
        write_json(building / COMPLETE, {**facts, "seeds": spec.seeds})
    else:
        progress(f"{spec.task_id}: a reference or gold run failed (exit codes {codes}); "
                 "its evaluations are infra, and the bundle is rebuilt next time")
    write_manifest(building)
    return codes
