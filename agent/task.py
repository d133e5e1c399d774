"""What the agent is told about a task: the parts of task.yaml an engineer would be given."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from gpu2tpu.errors import UserError
from gpu2tpu.record.targets import DEFAULT_TARGET, get_target
from gpu2tpu.tasks.finder import find_task

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
    seed_arg: str | None = None  # the argument that sets the seed (appended as ARG SEED)
    target: str = DEFAULT_TARGET
    start_tree: Path | None = None  # the tree the agent starts from (upstream: verified + data)
    workdir: str = ""  # where the command runs, relative to the tree
    project_statement: str | None = None  # upstream: the corpus record's problem statement

    @property
    def project_dir(self) -> Path:
        return self.start_tree or self.task_dir / "project"

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
        """The target's variables (on this machine: torch_xla emulating the chips on CPU)."""
        return get_target(self.target).env(self.target_chips)

    def prompt(self) -> str:
        """The task statement the agent starts from."""
        lines = [
            f"# Task {self.task_id}: {self.title}".rstrip(": "),
            "",
            self.description.strip(),
            "",
            "## Facts",
            f"- Command that runs the project (from {self.workdir or 'the project root'}): "
            f"{self.display_command()}",
            f"- Target: {get_target(self.target).describe(self.target_chips)}; `run_project` runs "
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
        if self.project_statement:
            lines += ["", "## The project (the corpus record's problem statement)",
                      "The command above, on stand-in data, is what this task runs and grades; "
                      "the statement below describes the project as published.", "",
                      self.project_statement.strip()]
        return "\n".join(lines) + "\n"


def load_task(tasks_dir: Path, task_id: str, target: str = DEFAULT_TARGET) -> AgentTask:
    """The agent's view of `tasks_dir/task_id`, read through the one task.yaml reader (RunSpec)."""
    if "/" in task_id or task_id.startswith("."):
        raise UserError(f"bad task id {task_id!r}: use the directory name under {tasks_dir}")
    from gpu2tpu.tasks.materialise import original_tree

    spec = find_task(task_id, Path(tasks_dir))
    start = original_tree(spec)
    if not start.is_dir():
        raise UserError(f"{spec.task_dir}: no project/ directory")
    return AgentTask(task_id=spec.task_id, task_dir=spec.task_dir, title=spec.title,
                     description=spec.description, command=list(spec.command),
                     target_chips=spec.target_chips, timeout_s=int(spec.timeout_s),
                     precision_policy=spec.precision_policy, steps=spec.steps,
                     protected=list(spec.protected), seed=spec.seed, seed_arg=spec.seed_arg,
                     target=get_target(target).name, start_tree=start, workdir=spec.workdir,
                     project_statement=project_statement(spec.source.repo) if spec.source else None)


def project_statement(repo: str) -> str | None:
    """The problem statement of the corpus record for `repo` (owner/name), None when the corpus
    has no record of it."""
    from gpu2tpu.corpus.problem import problem_statement
    from gpu2tpu.corpus.records import PROJECTS_DIR, load_record

    rec = load_record(PROJECTS_DIR / f"{repo.replace('/', '__')}.yaml")
    return str(problem_statement(rec.data)["text"]) if rec.data else None
