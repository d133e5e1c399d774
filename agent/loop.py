"""One attempt at one task: the tool-use loop against the Messages API."""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import anthropic

from gpu2tpu import __version__
from gpu2tpu.agent.human import Human
from gpu2tpu.agent.pricing import Price, Usage, cost_usd
from gpu2tpu.agent.task import AgentTask
from gpu2tpu.agent.tools import TOOL_SPECS, ToolBox, ToolError
from gpu2tpu.agent.trajectory import Trajectory
from gpu2tpu.agent.workspace import diff_trees, make_working_copy

SYSTEM_PROMPT = Path(__file__).resolve().parent / "prompts" / "system.md"
NUDGE = "Continue using the tools. Call `finish` when you are done."
ELIDED = "[older tool output elided to keep the conversation within the context window]"
KEEP_RECENT_MESSAGES = 6
RETRYABLE_STATUS = (429, 529)
RETRYABLE_TYPES = ("rate_limit_error", "overloaded_error")


class StopAttempt(Exception):
    """Ends an attempt early; the message becomes the prediction's `error`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason  # "cost_limit" or "api_error"


@dataclass
class Budget:
    """Money spent against an optional limit (one per attempt, one for the whole run)."""

    name: str
    limit: Decimal | None
    spent: Decimal = Decimal(0)

    def check(self) -> None:
        if self.limit is not None and self.spent >= self.limit:
            raise StopAttempt(
                "cost_limit",
                f"{self.name} cost limit reached: spent ${self.spent:.6f} of ${self.limit} "
                "before the next model call",
            )


@dataclass
class AgentConfig:
    model: str
    agent_name: str = "gpu2tpu-baseline"
    max_steps: int = 50
    max_tokens: int = 8192
    max_retries: int = 6
    retry_base_s: float = 2.0
    retry_max_s: float = 60.0
    command_timeout_s: int = 120
    output_limit: int = 20_000
    isolate: bool = False
    hide: list[Path] = field(default_factory=list)
    work_root: Path | None = None
    keep_work: bool = False
    system_prompt: Path = SYSTEM_PROMPT
    # Once a call's prompt exceeds this many tokens, older tool outputs are elided from requests
    # (the trajectory keeps them).
    context_tokens: int = 150_000


def _block(block: Any) -> dict[str, Any]:
    """An SDK content block as the plain dict we send back and store."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return dict(block.model_dump(exclude_none=True))


def _elide(message: dict[str, Any]) -> dict[str, Any]:
    blocks = [{**b, "content": ELIDED} if b.get("type") == "tool_result" else b
              for b in message["content"]]
    return {**message, "content": blocks}


def _request_messages(messages: list[dict[str, Any]], elide_before: int = 0
                      ) -> list[dict[str, Any]]:
    """The conversation as sent: tool outputs before `elide_before` elided, and a prompt-cache
    breakpoint on the newest block only."""
    out = [_elide(m) if i < elide_before else m for i, m in enumerate(messages)]
    last = dict(out[-1])
    blocks = [dict(b) for b in last["content"]]
    blocks[-1]["cache_control"] = {"type": "ephemeral"}
    last["content"] = blocks
    out[-1] = last
    return out


def _describe(exc: anthropic.APIStatusError) -> str:
    message = exc.api_message or str(exc)
    hint = "; check the API key" if exc.status_code in (401, 403) else ""
    rid = f" (request id {exc.request_id})" if exc.request_id else ""
    return f"Anthropic API error {exc.status_code} {exc.type or ''}: {message}{rid}{hint}".replace(
        "  ", " "
    )


def _retryable(exc: anthropic.APIStatusError) -> bool:
    return exc.status_code in RETRYABLE_STATUS or (exc.type or "") in RETRYABLE_TYPES


def _wait_s(cfg: AgentConfig, retry: int, exc: anthropic.APIStatusError) -> float:
    wait = min(cfg.retry_max_s, cfg.retry_base_s * 2**retry) * (0.5 + random.random() / 2)
    after = exc.response.headers.get("retry-after")
    try:
        wait = max(wait, min(float(after), cfg.retry_max_s)) if after else wait
    except ValueError:
        pass
    return round(wait, 3)


def create_message(
    client: anthropic.Anthropic, cfg: AgentConfig, request: dict[str, Any],
    retries: list[dict[str, Any]],
) -> Any:
    """messages.create with exponential backoff on rate-limit and overload errors only."""
    for retry in range(cfg.max_retries + 1):
        try:
            return client.messages.create(**request)
        except anthropic.APIStatusError as exc:
            if not _retryable(exc) or retry == cfg.max_retries:
                tried = f" after {retry + 1} tries" if retry else ""
                raise StopAttempt("api_error", _describe(exc) + tried) from exc
            wait = _wait_s(cfg, retry, exc)
            retries.append({"status": exc.status_code, "type": exc.type, "wait_s": wait})
            time.sleep(wait)
        except anthropic.APIConnectionError as exc:
            raise StopAttempt("api_error", f"cannot reach the Anthropic API: {exc}") from exc
        except anthropic.APIError as exc:  # e.g. a response the SDK cannot read
            raise StopAttempt("api_error", f"Anthropic API error: {exc}") from exc
    raise AssertionError("unreachable")


@dataclass
class AttemptResult:
    prediction: dict[str, Any]
    trajectory: Trajectory
    cost: Decimal
    usage: Usage


def run_attempt(
    client: anthropic.Anthropic, cfg: AgentConfig, task: AgentTask, attempt: int, price: Price,
    human: Human, budgets: list[Budget], header: dict[str, Any] | None = None,
) -> AttemptResult:
    """Copy the project, run the loop, and return the prediction (trajectory not yet saved)."""
    system = cfg.system_prompt.read_text()
    work_parent = Path(tempfile.mkdtemp(prefix=f"gpu2tpu-agent-{task.task_id}-",
                                        dir=cfg.work_root))
    work = make_working_copy(task.project_dir, work_parent / "project")
    tools = ToolBox(root=work, task=task, human=human, hide=cfg.hide, isolate=cfg.isolate,
                    command_timeout_s=cfg.command_timeout_s, output_limit=cfg.output_limit)
    traj = Trajectory(header={
        "task_id": task.task_id, "attempt": attempt, "agent": cfg.agent_name,
        "model": cfg.model, "harness_version": __version__, **(header or {}),
        "config": {"max_steps": cfg.max_steps, "max_tokens": cfg.max_tokens,
                   "cost_limits_usd": {b.name: None if b.limit is None else str(b.limit)
                                       for b in budgets},
                   "human": human.mode, "isolation": "bwrap" if cfg.isolate else "none",
                   "command_timeout_s": cfg.command_timeout_s},
        "price": price.to_json(), "system_prompt": system, "tools": TOOL_SPECS,
    })
    traj.messages.append({"role": "user", "content": [{"type": "text", "text": task.prompt()}]})
    usage, cost = Usage(), Decimal(0)
    stop, error = "max_steps", None
    elide_before = 0
    try:
        for step in range(1, cfg.max_steps + 1):
            for budget in budgets:
                budget.check()
            request = {
                "model": cfg.model, "max_tokens": cfg.max_tokens, "tools": TOOL_SPECS,
                "system": [{"type": "text", "text": system,
                            "cache_control": {"type": "ephemeral"}}],
                "messages": _request_messages(traj.messages, elide_before),
            }
            retries: list[dict[str, Any]] = []
            t0 = time.monotonic()
            try:
                response = create_message(client, cfg, request, retries)
            finally:
                if retries:
                    traj.event("retries", step=step, retries=retries)
            call_usage = Usage.from_api(response.usage)
            call_cost = cost_usd(call_usage, price)
            usage.add(call_usage)
            cost += call_cost
            for budget in budgets:
                budget.spent += call_cost
            content = [_block(b) for b in response.content]
            traj.messages.append({"role": "assistant", "content": content})
            traj.event("api_call", step=step, duration_s=round(time.monotonic() - t0, 3),
                       stop_reason=response.stop_reason, response_id=response.id,
                       usage=call_usage.to_json(), cost_usd=str(call_cost),
                       cost_total_usd=str(cost))
            if call_usage.prompt_tokens > cfg.context_tokens:
                elide_before = max(elide_before, len(traj.messages) - KEEP_RECENT_MESSAGES)
                traj.event("context_elided", step=step, before_message=elide_before)
            uses = [b for b in content if b["type"] == "tool_use"]
            if not uses:
                traj.messages.append({"role": "user", "content": [{"type": "text",
                                                                   "text": NUDGE}]})
                continue
            traj.messages.append({"role": "user", "content": _run_tools(tools, uses, traj, step)})
            if tools.finished:
                stop = "finish"
                break
        else:
            error = f"step limit reached: {cfg.max_steps} model calls without finish"
    except StopAttempt as exc:
        stop, error = exc.reason, str(exc)
    diff = diff_trees(task.project_dir, work)
    if cfg.keep_work:
        traj.header["work_dir"] = str(work)
    else:
        shutil.rmtree(work_parent, ignore_errors=True)
    claimed = bool(tools.finished and tools.finished.claimed_success and error is None)
    traj.outcome = {
        "stop": stop, "error": error, "claimed_success": claimed,
        "summary": tools.finished.summary if tools.finished else None,
        "usage": usage.to_json(), "cost_usd": str(cost),
        "human_interventions": human.interventions,
        "human": [vars(ex) for ex in human.exchanges], "tool_calls": tools.calls,
        "patch_files": diff.files, "patch_skipped": diff.skipped,
    }
    prediction: dict[str, Any] = {
        "schema_version": 1, "task_id": task.task_id, "agent": cfg.agent_name,
        "model": cfg.model, "patch": diff.patch, "claimed_success": claimed,
        "agent_cost_usd": float(cost), "input_tokens": usage.prompt_tokens,
        "output_tokens": usage.output_tokens, "human_interventions": human.interventions,
        "attempt": attempt, "wall_time_s": traj.elapsed(),
    }
    if error is not None:
        prediction["error"] = error
    return AttemptResult(prediction, traj, cost, usage)


def _run_tools(tools: ToolBox, uses: list[dict[str, Any]], traj: Trajectory,
               step: int) -> list[dict[str, Any]]:
    """Run each tool_use block in order; every one gets a tool_result."""
    results: list[dict[str, Any]] = []
    for use in uses:
        asked = len(tools.human.exchanges)
        t0 = time.monotonic()
        try:
            output, is_error = tools.call(use["name"], use["input"]), False
        except ToolError as exc:
            output, is_error = str(exc), True
        except Exception as exc:  # a tool bug must not end the attempt; the model sees it
            output, is_error = f"internal error in {use['name']}: {type(exc).__name__}: {exc}", True
        traj.event("tool_call", step=step, id=use["id"], name=use["name"], input=use["input"],
                   is_error=is_error, duration_s=round(time.monotonic() - t0, 3),
                   result_chars=len(output))
        for ex in tools.human.exchanges[asked:]:
            traj.event("human", step=step, question=ex.question, answer=ex.answer,
                       source=ex.source)
        results.append({"type": "tool_result", "tool_use_id": use["id"],
                        "content": output or "(no output)", "is_error": is_error})
    return results
