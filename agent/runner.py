"""Run the agent over tasks and attempts; write predictions (JSONL) and trajectories."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import anthropic

from gpu2tpu.agent.human import Human
from gpu2tpu.agent.loop import AgentConfig, Budget, run_attempt
from gpu2tpu.agent.pricing import Price
from gpu2tpu.agent.task import AgentTask
from gpu2tpu.corpus import revision
from gpu2tpu.errors import UserError


@dataclass
class RunPlan:
    tasks: list[AgentTask]
    attempts: int
    out: Path  # predictions JSONL
    trajectory_dir: Path
    cost_limit_usd: Decimal | None = None  # per attempt
    total_cost_limit_usd: Decimal | None = None
    append: bool = False


def make_client(api_key: str, base_url: str | None = None, timeout_s: float = 600.0
                ) -> anthropic.Anthropic:
    """The official SDK client; its own retries are off (the loop retries and records them)."""
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0,
                               timeout=timeout_s)


def _relative(path: Path, start: Path) -> str:
    try:
        return os.path.relpath(path.resolve(), start.resolve())
    except ValueError:  # another drive (Windows)
        return str(path.resolve())


def run_agent(
    client: anthropic.Anthropic, cfg: AgentConfig, plan: RunPlan, price: Price, human: Human,
    secrets: list[str], log: TextIO | None = None,
) -> list[dict[str, Any]]:
    """Every attempt of every task in order; each prediction line is written as soon as done."""
    log = log or sys.stderr
    if plan.out.exists() and plan.out.stat().st_size and not plan.append:
        raise UserError(f"{plan.out} already has predictions; pass --append or another --out")
    plan.out.parent.mkdir(parents=True, exist_ok=True)
    total = Budget("run", plan.total_cost_limit_usd)
    header = {"corpus_revision": revision()}
    predictions: list[dict[str, Any]] = []
    with plan.out.open("a") as out:
        for task in plan.tasks:
            for attempt in range(1, plan.attempts + 1):
                budgets = [Budget("attempt", plan.cost_limit_usd), total]
                result = run_attempt(client, cfg, task, attempt, price, human.fresh(), budgets,
                                     header)
                traj_path = plan.trajectory_dir / f"{task.task_id}.{attempt}.json"
                result.trajectory.save(traj_path, secrets)
                pred = {**result.prediction,
                        "trajectory": _relative(traj_path, plan.out.parent)}
                out.write(json.dumps(pred, ensure_ascii=False) + "\n")
                out.flush()
                predictions.append(pred)
                status = pred.get("error") or (
                    "claims success" if pred["claimed_success"] else "claims failure")
                log.write(f"[agent] {task.task_id} attempt {attempt}: {status}; "
                          f"${pred['agent_cost_usd']:.4f}, {len(pred['patch'])} patch chars\n")
    return predictions
