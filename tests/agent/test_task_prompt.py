"""What the agent is told: an upstream task's prompt carries its corpus record's problem statement."""

from __future__ import annotations

from pathlib import Path

from gpu2tpu.agent.task import AgentTask, project_statement


def _task(statement: str | None) -> AgentTask:
    return AgentTask(task_id="t", task_dir=Path("."), title="a task", description="Migrate it.",
                     command=["python", "train.py"], target_chips=1, timeout_s=60,
                     project_statement=statement)


def test_an_upstream_prompt_carries_the_record_problem_statement() -> None:
    statement = project_statement("tkipf/pygcn")
    assert statement is not None
    assert "tkipf/pygcn" in statement and "cd pygcn && python train.py" in statement
    prompt = _task(statement).prompt()
    assert "## The project (the corpus record's problem statement)" in prompt
    assert statement.strip() in prompt and "stand-in data" in prompt


def test_no_record_no_statement() -> None:
    assert project_statement("nobody/no-such-project") is None
    assert "problem statement" not in _task(None).prompt()
