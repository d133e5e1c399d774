"""What the agent is told about a task: the parts of task.yaml an engineer would be given."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.cli import UserError

DEFAULT_TIMEOUT_S = 600


@dataclass(frozen=True)
class AgentTask:
    task_id: str
    task_dir: Path
    title: str
    description: str
    command: list[str]
    target_chips: int
    timeout_s: int
    precision_policy: str = "fp32"
    steps: int | None = None
    protected: list[str] = field(default_factory=list)
    seed: int | None = None
    seed_env: str | None = None  # environment variable that sets the seed
    seed_arg: str | None = None  # or the argument that does (appended as ARG SEED)

    @property
    def project_dir(self) -> Path:
        return self.task_dir / "project"

    def project_argv(self) -> list[str]:
        """The task's command as an argv, run by this Python when it names a script."""
        argv = list(self.command)
        if self.seed_arg and self.seed is not None:
            argv += [self.seed_arg, str(self.seed)]
        if argv and argv[0] in ("python", "python3"):
            return [sys.executable, *argv[1:]]
        if argv and argv[0].endswith(".py"):
            return [sys.executable, *argv]
        return argv

    def display_command(self) -> str:
        argv = self.project_argv()
        if argv and argv[0] == sys.executable:
            argv = ["python", *argv[1:]]
        return " ".join(argv)

    def project_env(self) -> dict[str, str]:
        """Variables that make torch_xla emulate the target chips on CPU."""
        env = {"PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": str(self.target_chips)}
        if self.seed_env and self.seed is not None:
            env[self.seed_env] = str(self.seed)
        return env

    def prompt(self) -> str:
        """The task statement the agent starts from."""
        lines = [
            f"# Task {self.task_id}: {self.title}".rstrip(": "),
            "",
            self.description.strip(),
            "",
            "## Facts",
            f"- Command that runs the project (from the project root): {self.display_command()}",
            f"- Target: {self.target_chips} TPU chip(s). Here they are emulated by torch_xla on "
            f"CPU (PJRT_DEVICE=CPU, CPU_NUM_DEVICES={self.target_chips}); `run_project` runs "
            "the command that way.",
            f"- Precision policy: {self.precision_policy}"
            + (" (fp16 AMP may become bf16 autocast)" if self.precision_policy == "bf16_allowed"
               else " (keep fp32 numerics)"),
            f"- Time limit for one run: {self.timeout_s}s.",
        ]
        if self.steps is not None:
            lines.append(f"- Optimizer steps the run must reach: {self.steps}.")
        if self.protected:
            lines.append(f"- Protected paths (do not modify): {', '.join(self.protected)}.")
        return "\n".join(lines) + "\n"


def _need(data: dict[str, Any], key: str, path: Path) -> Any:
    if key not in data:
        raise UserError(f"{path}: task.yaml lacks `{key}`")
    return data[key]


def load_task(tasks_dir: Path, task_id: str) -> AgentTask:
    """Read `tasks_dir/task_id/task.yaml`; refuse a task without a project/."""
    task_dir = (tasks_dir / task_id).resolve()
    path = task_dir / "task.yaml"
    if "/" in task_id or task_id.startswith("."):
        raise UserError(f"bad task id {task_id!r}: use the directory name under {tasks_dir}")
    if not path.is_file():
        known = sorted(p.parent.name for p in tasks_dir.glob("*/task.yaml"))
        raise UserError(
            f"no task {task_id!r} in {tasks_dir} (known: {', '.join(known) or 'none'}); "
            "check --tasks / --tasks-dir"
        )
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {exc}") from exc
    if not (task_dir / "project").is_dir():
        raise UserError(f"{task_dir}: no project/ directory")
    command = _need(data, "command", path)
    if isinstance(command, str):
        command = command.split()
    if not isinstance(command, list) or not command:
        raise UserError(f"{path}: `command` must be a non-empty argv list")
    return AgentTask(
        task_id=task_id,
        task_dir=task_dir,
        title=str(data.get("title", "")),
        description=str(data.get("description", "")),
        command=[str(c) for c in command],
        target_chips=int(data.get("target_chips", 1)),
        timeout_s=int(data.get("timeout_s", DEFAULT_TIMEOUT_S)),
        precision_policy=str(data.get("precision_policy", "fp32")),
        steps=int(data["steps"]) if data.get("steps") is not None else None,
        protected=[str(p) for p in data.get("protected") or []],
        seed=int(data["seed"]) if data.get("seed") is not None else None,
        seed_env=str(data["seed_env"]) if data.get("seed_env") else None,
        seed_arg=str(data["seed_arg"]) if data.get("seed_arg") else None,
    )
