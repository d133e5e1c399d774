"""Writes run directories in exactly the docs/formats.md shape, and a stand-in regrader.

`fake_regrade` replaces only `gpu2tpu.leaderboard.ingest.regrade_graded` for these synthetic runs,
whose tasks and traces are made up (the harness's own regrader needs real task directories; it is
exercised on real runs in test_real_runs.py): it checks every listed hash and grades from the trace
and goal files with simple rules, so a verdict forged in report.json cannot survive it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu2tpu.leaderboard.runfiles import SubmissionRefused

HARNESS = "0.1.0"
EVIDENCE = ("scan.json", "kernel.json")  # what a run of this harness adds to each run's files
CRITERIA = ("runs", "numerics", "hardware", "goal", "performance")
_CATEGORY = {
    "runs": "crash",
    "numerics": "numerics_drift",
    "hardware": "wrong_device",
    "goal": "goal_regressed",
    "performance": "recompilation",
}
REF_LOSS0, REF_GOAL, STEPS, MAX_COMPILES = 2.30, 0.80, 4, 10
# where each stand-in criterion's line says its evidence came from (goal: the harness's own
# measurement, untagged as in the real criteria); hardware is `supervisor` where a kernel view is
_SOURCE = {"runs": "in-process", "numerics": "in-process", "hardware": "in-process", "goal": None,
           "performance": "in-process"}


@dataclass
class Eval:
    task_id: str
    attempt: int = 1
    backend: str = "xla"  # 'cpu' makes a wrong_device failure
    exit_code: int = 0
    loss0: float = REF_LOSS0
    goal: float = REF_GOAL
    compiles: int = 3
    claimed_success: bool | None = True
    agent_cost_usd: float = 0.5
    human_interventions: int = 0
    chip_seconds: float = 36.0
    step_time_s: float = 0.01
    reference_step_time_s: float = 0.02
    target: str = "xla-cpu"
    infra: bool = False
    unverified: bool = False  # graded without evidence the grader could not collect
    patch_rejected: bool = False  # never ran: no trace.jsonl, process.json says so
    extra: dict[str, Any] = field(default_factory=dict)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _jsonl(path: Path, events: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def trace_events(backend: str, exit_code: int, loss0: float, compiles: int) -> list[dict]:
    device = "xla:0" if backend in ("xla", "tpu") else "cpu"
    events: list[dict[str, Any]] = [
        {
            "event": "start",
            "schema_version": 1,
            "probe_version": "0.1.0",
            "argv": ["train.py"],
            "cwd": "/w",
            "python": "3.11",
            "torch": "2.9.0",
            "torch_xla": "2.9.0",
            "torch_tpu": None,
            "libtpu": None,
            "env": {"PJRT_DEVICE": "CPU"},
        },
        {"event": "seed", "fn": "torch.manual_seed", "value": 0},
        {
            "event": "optimizer",
            "class": "SGD",
            "groups": [{"lr": 0.1, "n_params": 2}],
            "param_count": 10,
            "param_shapes_sha": "ab" * 32,
            "param_devices": [device],
        },
    ]
    for step in range(STEPS):
        events.append(
            {
                "event": "step",
                "step": step,
                "loss": loss0 - 0.1 * step,
                "micro_batches": 1,
                "grad_norm": 1.0,
                "clip": [],
                "lr": [0.1],
                "batch_size": [8],
                "input_devices": [device],
                "loss_device": device,
                "wall_s": 0.01,
                "skipped": False,
                "counters": {
                    "compiles": compiles,
                    "cached_compiles": 0,
                    "executions": step + 1,
                    "syncs": step + 1,
                    "host_reads": 0,
                    "fallback": {},
                },
            }
        )
    events.append(
        {
            "event": "end",
            "exit_code": exit_code,
            "error": None,
            "wall_s": 1.0,
            "steps": STEPS,
            "runtime": {
                "backend": backend,
                "device_type": "CPU",
                "device_count": 1,
                "spmd": False,
                "world_size": 1,
                "devices_used": 1,
            },
            "counters": {"compiles": compiles},
            "compile_time_s": 0.1,
            "execute_time_s": 0.5,
        }
    )
    return events


def grade(run_dir: Path, eval_dir: Path, report: dict[str, Any]) -> dict[str, Any]:
    """The stand-in criteria: pure functions of the trace, process and goal files."""
    if json.loads((eval_dir / "process.json").read_text()).get("patch_rejected"):
        line = {"ok": False, "text": "patch does not apply", "category": "patch_rejected"}
        crit = {c: {"passed": False, "evidence": [dict(line)]} for c in CRITERIA}
        return {
            "migrated": False,
            "silent": False,
            "category": "patch_rejected",
            "categories": ["patch_rejected"],
            "criteria": crit,
        }
    events = [json.loads(line) for line in (eval_dir / "trace.jsonl").read_text().splitlines()]
    ref_dir = run_dir / report["reference"]["dir"]
    ref_steps = [json.loads(x) for x in (ref_dir / "seed-0" / "trace.jsonl").read_text().splitlines()]
    ref_loss0 = next(e["loss"] for e in ref_steps if e["event"] == "step")
    ref_goal = json.loads((ref_dir / "seed-0" / "goal.json").read_text())["value"]
    end = events[-1]
    steps = [e for e in events if e["event"] == "step"]
    goal = json.loads((eval_dir / "goal.json").read_text())
    passed = {
        "runs": end["exit_code"] == 0 and len(steps) >= STEPS,
        "numerics": bool(steps) and abs(steps[0]["loss"] - ref_loss0) <= 0.05 * abs(ref_loss0),
        "hardware": end["runtime"]["backend"] in ("xla", "tpu")
        and all(s["loss_device"].startswith("xla") for s in steps),
        "goal": goal.get("value") is not None and goal["value"] >= ref_goal - 0.05,
        "performance": end["counters"]["compiles"] <= MAX_COMPILES,
    }
    categories = [_CATEGORY[c] for c in CRITERIA if not passed[c]]
    if goal.get("infra"):
        categories = ["infra"] + categories
    if goal.get("unverified"):
        categories = categories + ["unverified"]
    migrated = not categories
    sources = dict(_SOURCE, hardware="supervisor" if "kernel.json" in report["files"] else "in-process")
    criteria = {
        c: {
            "passed": passed[c],
            "evidence": [
                {
                    "ok": passed[c],
                    "text": f"{c}: {'ok' if passed[c] else 'failed'}",
                    "category": None if passed[c] else _CATEGORY[c],
                    **({"source": sources[c]} if sources[c] else {}),
                }
            ],
        }
        for c in CRITERIA
    }
    return {
        "migrated": migrated,
        "silent": end["exit_code"] == 0 and not migrated and categories[:1] != ["unverified"],
        "category": categories[0] if categories else None,
        "categories": categories,
        "criteria": criteria,
    }


def fake_regrade(report_path: Path, verified: object = None) -> dict[str, Any]:
    """Stand-in for regrade_graded: hash checks first, then grading from the files; the made-up
    tasks have no harness, so the figures are the report's own (real runs: test_trust.py)."""
    report = json.loads(report_path.read_text())
    eval_dir = report_path.parent
    run_dir = eval_dir.parent.parent
    for name, expected in report["files"].items():
        path = eval_dir / name if (eval_dir / name).exists() else run_dir / name
        if not path.exists() or sha(path) != expected:
            raise SubmissionRefused(f"integrity: {name}")
    return {"verdict": grade(run_dir, eval_dir, report), "candidate": report.get("candidate") or {},
            "execution": report.get("execution") or {}}


def kernel_view(cpu_s: float = 1.0) -> dict[str, Any]:
    """A made-up kernel.json (the stand-in criteria only hash it)."""
    return {"schema_version": 1, "threads": [{"tid": 1, "cpu_s": cpu_s, "samples": {}}], "errors": []}


def write_references(run_dir: Path, ref_id: str = "ref-1", evidence: tuple[str, ...] = EVIDENCE) -> str:
    ref = run_dir / "references" / ref_id
    for sub in ("seed-0", "gold"):
        _jsonl(ref / sub / "trace.jsonl", trace_events("xla", 0, REF_LOSS0, 3))
        (ref / sub / "goal.json").write_text(
            json.dumps({"schema_version": 1, "metric": "accuracy", "value": REF_GOAL})
        )
        if "kernel.json" in evidence:
            (ref / sub / "kernel.json").write_text(json.dumps(kernel_view()))
    return ref_id


def write_run(
    root: Path,
    evals: list[Eval],
    run_id: str = "run-1",
    agent: str = "agent-a",
    model: str | None = "model-x",
    corpus_revision: str | None = None,  # default: the installed corpus's revision
    harness_version: str = HARNESS,
    evidence: tuple[str, ...] = EVIDENCE,  # older harnesses: ("scan.json",) or ()
) -> Path:
    """A complete run directory; every report.json carries the verdict `grade` would give.
    `evidence`: which of scan.json and kernel.json the harness wrote (kernel.json for the
    references too; neither for a candidate whose patch was rejected)."""
    if corpus_revision is None:
        import gpu2tpu.corpus

        corpus_revision = gpu2tpu.corpus.revision()
    run_dir = root / run_id
    ref_id = write_references(run_dir, evidence=evidence)
    listed = []
    for ev in evals:
        name = ev.task_id if ev.attempt == 1 else f"{ev.task_id}.{ev.attempt}"
        eval_dir = run_dir / agent / name
        events = trace_events(ev.backend, ev.exit_code, ev.loss0, ev.compiles)
        if not ev.patch_rejected:
            _jsonl(eval_dir / "trace.jsonl", events)
        eval_dir.mkdir(parents=True, exist_ok=True)
        process = {
            "exit_code": ev.exit_code,
            "wall_s": 1.0,
            "timed_out": False,
            "patch_rejected": ev.patch_rejected,
        }
        (eval_dir / "process.json").write_text(json.dumps(process))
        goal = {"schema_version": 1, "metric": "accuracy", "value": ev.goal}
        if ev.infra:
            goal["infra"] = True
        if ev.unverified:
            goal["unverified"] = True
        (eval_dir / "goal.json").write_text(json.dumps(goal))
        (eval_dir / "patch.diff").write_text(f"diff --git a/train.py b/train.py\n# {name}\n")
        (eval_dir / "stdout.log").write_text("PASSED\n")
        (eval_dir / "stderr.log").write_text("")
        if not ev.patch_rejected:
            if "scan.json" in evidence:
                (eval_dir / "scan.json").write_text(json.dumps(
                    {"schema_version": 1, "source": "static-scan", "files": 1, "added_lines": 1,
                     "findings": []}))
            if "kernel.json" in evidence:
                (eval_dir / "kernel.json").write_text(json.dumps(kernel_view()))
        names = ("trace.jsonl", "process.json", "goal.json", "patch.diff", "scan.json", "kernel.json")
        files = {n: sha(eval_dir / n) for n in names if (eval_dir / n).exists()}
        for sub in ("seed-0", "gold"):
            for f in ("trace.jsonl", "goal.json", "kernel.json"):
                rel = f"references/{ref_id}/{sub}/{f}"
                if (run_dir / rel).exists():
                    files[rel] = sha(run_dir / rel)
        report: dict[str, Any] = {
            "schema_version": 1,
            "harness_version": harness_version,
            "corpus_revision": corpus_revision,
            "run_id": run_id,
            "task_id": ev.task_id,
            "task_hash": hashlib.sha256(ev.task_id.encode()).hexdigest(),
            "agent": agent,
            "model": model,
            "attempt": ev.attempt,
            "prediction_hash": hashlib.sha256(f"{agent}{name}".encode()).hexdigest(),
            "created_at": "2026-12-02T16:00:00+00:00",
            "target": ev.target,
            "prediction": {
                "claimed_success": ev.claimed_success,
                "agent_cost_usd": ev.agent_cost_usd,
                "input_tokens": 1000,
                "output_tokens": 200,
                "human_interventions": ev.human_interventions,
                "wall_time_s": 60.0,
            },
            "candidate": {
                "exit_code": ev.exit_code,
                "timed_out": False,
                "wall_s": 1.0,
                "goal": {"metric": "accuracy", "value": ev.goal},
            },
            "execution": {
                "target": ev.target,
                "chips": 1,
                "chip_seconds": ev.chip_seconds,
                "step_time_s": ev.step_time_s,
                "compile_count": ev.compiles,
                "reference_step_time_s": ev.reference_step_time_s,
            },
            "reference": {"id": ref_id, "dir": f"references/{ref_id}"},
            "runtime": {
                "sandbox": "bwrap",
                "torch": "2.9.0",
                "torch_xla": "2.9.0",
                "torch_tpu": None,
                "libtpu": None,
                "device_type": "CPU",
                "device_count": 1,
            },
            "files": files,
        }
        report.update(ev.extra)
        report["verdict"] = grade(run_dir, eval_dir, report)
        (eval_dir / "report.json").write_text(json.dumps(report, indent=1))
        listed.append(f"{agent}/{name}/report.json")
    (run_dir / "summary.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "run_id": run_id,
                "harness_version": harness_version,
                "corpus_revision": corpus_revision,
                "created_at": "2026-12-02T16:00:00+00:00",
                "evaluations": listed,
                "counts": {},
            }
        )
    )
    return run_dir


def write_metadata(path: Path, agent: str = "agent-a", model: str = "model-x", **extra) -> Path:
    lines = [f"agent: {agent}", f"model: {model}", "organisation: Test Lab", "date: 2026-12-02"] + [
        f"{k}: {v}" for k, v in extra.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path
