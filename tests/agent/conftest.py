"""Fixtures: a tiny task directory laid out like tasks/<id>/, and agent settings."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpu2tpu.agent.human import Human
from gpu2tpu.agent.loop import AgentConfig
from gpu2tpu.agent.pricing import Price, price_for
from gpu2tpu.agent.task import AgentTask, load_task

TRAIN_PY = textwrap.dedent('''\
    """Toy training script: reports where it would run."""
    import os
    import sys

    DEVICE = "cuda"

    def main():
        seed = sys.argv[sys.argv.index("--seed") + 1] if "--seed" in sys.argv else "none"
        print("device", DEVICE, "seed", seed)
        print("PJRT_DEVICE", os.environ.get("PJRT_DEVICE"))
        print("CPU_NUM_DEVICES", os.environ.get("CPU_NUM_DEVICES"))
        print("SECRET_VISIBLE", "FAKE_SERVICE_API_KEY" in os.environ)
        with open("out.txt", "w") as f:
            f.write("ran\\n")

    if __name__ == "__main__":
        main()
    ''')

TASK_YAML = textwrap.dedent("""\
    schema_version: 1
    task_id: toy
    title: Toy task
    description: Make train.py use the XLA device.
    command: [train.py]
    seed: 7
    seed_arg: --seed
    steps: 3
    target_chips: 4
    precision_policy: fp32
    protected: [data.py]
    checkpoint: out.txt
    goal: {metric: accuracy, higher_is_better: true, tolerance: 0.05}
    timeout_s: 60
    """)


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    """tasks/toy with project/, evaluate.py and migrations/ (the last two never reachable)."""
    root = tmp_path / "tasks"
    task = root / "toy"
    (task / "project").mkdir(parents=True)
    (task / "project" / "train.py").write_text(TRAIN_PY)
    (task / "project" / "data.py").write_text("DATA = [1, 2, 3]\n")
    (task / "project" / ".git").mkdir()  # history that must not reach the working copy
    (task / "project" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (task / "task.yaml").write_text(TASK_YAML)
    (task / "evaluate.py").write_text("GOLD_SECRET_EVALUATE = 1\n")
    (task / "migrations" / "broken").mkdir(parents=True)
    (task / "migrations" / "gold.patch").write_text("GOLD_SECRET_PATCH\n")
    return root


@pytest.fixture
def task(tasks_dir: Path) -> AgentTask:
    return load_task(tasks_dir, "toy")


@pytest.fixture
def cfg(tmp_path: Path, tasks_dir: Path) -> AgentConfig:
    work = tmp_path / "work"
    work.mkdir()
    return AgentConfig(model="claude-sonnet-4-5", max_steps=10, retry_base_s=0.01,
                       retry_max_s=0.05, work_root=work, hide=[tasks_dir])


@pytest.fixture
def price() -> Price:
    return price_for("claude-sonnet-4-5")


@pytest.fixture
def never() -> Human:
    return Human("never")
