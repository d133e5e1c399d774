"""The README's commands, verbatim, in a subprocess, from a fresh working directory.

A new user types these from the repository root: here the fresh directory holds what a clone holds
next to them (`examples/`, and `.venv` as a link to this interpreter's environment)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def walkthrough() -> list[str]:
    text = README.read_text()
    match = re.search(r"<!-- walkthrough:[^>]*-->\s*```sh\n(.*?)```", text, re.DOTALL)
    assert match, "README.md lost its walkthrough block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def fresh_checkout(root: Path) -> Path:
    """A directory shaped like the repository root for the README's relative paths."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "examples", root / "examples")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return root


def user_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["GPU2TPU_DB"] = str(tmp_path / "store" / "leaderboard.duckdb")
    env.pop("PYTHONPATH", None)
    return env


def run(line: str, cwd: Path, env: dict[str, str], timeout: float = 1200) -> subprocess.CompletedProcess:
    return subprocess.run(shlex.split(line), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_walkthrough_verbatim(tmp_path: Path) -> None:
    lines = walkthrough()
    assert lines[0].startswith(".venv/bin/gpu2tpu") and any(" demo" in line for line in lines)
    cwd = fresh_checkout(tmp_path / "fresh clone")
    env = user_env(tmp_path)
    outputs = {}
    for line in lines:
        proc = run(line, cwd, env)
        assert proc.returncode == 0, f"`{line}` exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, f"`{line}`:\n{proc.stderr}"
        outputs[line] = proc.stdout
    demo = next(out for line, out in outputs.items() if line.endswith(" demo"))
    assert "all verdicts as labelled" in demo and demo.count("cifar_amp") >= 4  # gold + 3 broken
    assert (cwd / "runs" / "demo" / "summary.json").is_file()
    expected = json.loads((cwd / "examples" / "preds.expected.json").read_text())
    for label, want in expected.items():
        report = json.loads((cwd / "runs" / "my-run" / label / "report.json").read_text())
        got = {k: report["verdict"][k] for k in want}
        assert got == want, f"{label}: {got} != {want}"
    agents = next(out for line, out in outputs.items() if line.endswith("leaderboard agents"))
    for agent in ("gold", "broken-stays_on_cpu", "broken-item_every_step", "broken-clip_changed"):
        assert agent in agents, agents
    assert (cwd / "leaderboard-export" / "manifest.json").is_file()
    page = (cwd / "leaderboard-site" / "index.html").read_text()
    assert str(tmp_path) not in page, "the public page shows a local path"


def test_paths_a_user_can_type(tmp_path: Path) -> None:
    """Spaces, a symlinked directory and `~` (expanded by gpu2tpu, not by a shell)."""
    home = tmp_path / "home dir"
    real = home / "real place"
    real.mkdir(parents=True)
    (home / "linked").symlink_to(real, target_is_directory=True)
    cwd = fresh_checkout(home / "clone")
    from gpu2tpu.tasks.finder import find_task
    from gpu2tpu.tasks.materialise import migration_patch

    # the quickest practice task's gold (the paths are under test; the walkthrough runs the example)
    line = {"schema_version": 1, "task_id": "varlen_cls", "agent": "example-agent",
            "patch": migration_patch(find_task("varlen_cls"), "gold"), "claimed_success": True}
    (cwd / "my preds.jsonl").write_text(json.dumps(line) + "\n")
    env = {**user_env(tmp_path), "HOME": str(home)}
    gpu2tpu = ".venv/bin/gpu2tpu"
    # a run id is a plain name (a space in one is refused, issue 42); the paths hold the spaces
    proc = subprocess.run([gpu2tpu, "evaluate", "--predictions", "my preds.jsonl", "--run-id", "r-1",
                           "--runs", "~/linked/runs"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    report = real / "runs" / "r-1" / "example-agent" / "varlen_cls" / "report.json"
    assert json.loads(report.read_text())["verdict"]["migrated"]
    proc = subprocess.run([gpu2tpu, "report", "~/linked/runs/r-1"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "varlen_cls" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("content, message", [
    (b'{"schema_version": 1, "task_id": "no_such_task", "agent": "a", "patch": "x"}\n',
     "unknown task 'no_such_task'"),
    (b'{"schema_version": 1, "task_id": "cifar_amp", "agent": "a", "patch": "\xff\xfe"}\n',
     "not UTF-8"),
])
def test_bad_predictions_are_named(tmp_path: Path, content: bytes, message: str) -> None:
    cwd = fresh_checkout(tmp_path / "clone")
    (cwd / "bad.jsonl").write_bytes(content)
    proc = run(".venv/bin/gpu2tpu evaluate --predictions bad.jsonl --run-id bad", cwd,
               user_env(tmp_path), timeout=300)
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = [line.strip() for line in README.read_text().splitlines()
               if "pytest" in line and line.startswith("    ")]
    assert len(command) == 1, command
    assert command[0] in (REPO / ".ci" / "run").read_text().splitlines()
