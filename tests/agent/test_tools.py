"""The agent's tools on a working copy of the toy task."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpu2tpu.agent import commands
from gpu2tpu.agent.human import NO_HELP, SCRIPT_EXHAUSTED, Human, parse_human
from gpu2tpu.agent.task import AgentTask
from gpu2tpu.agent.tools import ToolBox, ToolError
from gpu2tpu.agent.workspace import make_working_copy
from gpu2tpu.errors import UserError


@pytest.fixture
def box(task: AgentTask, tmp_path: Path, tasks_dir: Path) -> ToolBox:
    work = make_working_copy(task.project_dir, tmp_path / "work" / "project")
    return ToolBox(root=work, task=task, human=Human("never"),
                   hide=commands.hidden_paths([tasks_dir]),
                   isolate=commands.namespace_available(), output_limit=2000)


def test_list_read_edit_write(box: ToolBox) -> None:
    listing = box.call("list_files", {})
    assert "train.py" in listing and "data.py" in listing and ".git" not in listing
    assert 'DEVICE = "cuda"' in box.call("read_file", {"path": "train.py"})
    assert box.call("read_file", {"path": "train.py", "start_line": 5, "end_line": 5}) == (
        'DEVICE = "cuda"')
    box.call("edit_file", {"path": "train.py", "old_text": 'DEVICE = "cuda"',
                           "new_text": 'DEVICE = "xla"'})
    assert 'DEVICE = "xla"' in (box.root / "train.py").read_text()
    box.call("write_file", {"path": "sub/new.py", "content": "x = 1\r\n"})
    assert (box.root / "sub" / "new.py").read_bytes() == b"x = 1\r\n"


def test_edit_must_match_exactly_once(box: ToolBox) -> None:
    with pytest.raises(ToolError, match="not found"):
        box.call("edit_file", {"path": "train.py", "old_text": "nope", "new_text": ""})
    with pytest.raises(ToolError, match=r"found \d+ times"):
        box.call("edit_file", {"path": "train.py", "old_text": "print(", "new_text": "p("})
    with pytest.raises(ToolError, match="bad arguments"):
        box.call("edit_file", {"path": "train.py"})


def test_edit_of_a_crlf_file_with_newlines_keeps_its_line_endings(box: ToolBox) -> None:
    (box.root / "win.py").write_bytes(b"import torch\r\nx = torch.zeros(2).cuda()\r\nprint(x)\r\n")
    box.call("edit_file", {"path": "win.py", "old_text": "import torch\nx = torch.zeros(2).cuda()\n",
                           "new_text": "import torch\nimport torch_xla\nx = torch.zeros(2).to('xla')\n"})
    assert (box.root / "win.py").read_bytes() == (b"import torch\r\nimport torch_xla\r\n"
                                                   b"x = torch.zeros(2).to('xla')\r\nprint(x)\r\n")
    with pytest.raises(ToolError, match="not found"):  # still exact otherwise
        box.call("edit_file", {"path": "win.py", "old_text": "print(y)\n", "new_text": ""})


@pytest.mark.parametrize("tool,args", [
    ("read_file", {"path": "../evaluate.py"}),
    ("read_file", {"path": "../migrations/gold.patch"}),
    ("list_files", {"path": "../migrations"}),
    ("list_files", {"path": ".."}),
    ("write_file", {"path": "../evil.py", "content": "x"}),
    ("edit_file", {"path": "../task.yaml", "old_text": "a", "new_text": "b"}),
])
def test_task_files_are_refused(box: ToolBox, tool: str, args: dict) -> None:
    with pytest.raises(ToolError, match="refused"):
        box.call(tool, args)


def test_absolute_and_symlinked_task_paths_refused(box: ToolBox, task: AgentTask) -> None:
    with pytest.raises(ToolError, match="refused"):
        box.call("read_file", {"path": str(task.task_dir / "evaluate.py")})
    (box.root / "peek").symlink_to(task.task_dir / "migrations")
    with pytest.raises(ToolError, match="refused"):
        box.call("read_file", {"path": "peek/gold.patch"})
    assert "GOLD_SECRET" not in box.call("list_files", {})


def test_protected_paths_refused(box: ToolBox) -> None:
    with pytest.raises(ToolError, match="protected"):
        box.call("write_file", {"path": "data.py", "content": ""})
    with pytest.raises(ToolError, match="protected"):
        box.call("edit_file", {"path": "./data.py", "old_text": "DATA", "new_text": "D"})


def test_run_command_output_timeout_and_secrets(box: ToolBox,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SERVICE_API_KEY", "k1")
    monkeypatch.setenv("HF_TOKEN", "k2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "k3")
    monkeypatch.setenv("GITHUB_TOKEN", "k4")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    out = box.call("run_command", {"command": "pwd; env | sort"})
    assert out.startswith("[exit code 0;")
    assert str(box.root.resolve()) in out
    for name in ("FAKE_SERVICE_API_KEY", "HF_TOKEN", "AWS_SECRET", "GITHUB_TOKEN"):
        assert name not in out
    # sandboxed: an allow-listed environment (not a secret, still not passed); unsandboxed: scrubbed
    assert ("TOKENIZERS_PARALLELISM=false" in out) != box.isolate
    long = box.call("run_command", {"command": "seq 1 5000"})
    assert "characters cut" in long and long.rstrip().endswith("5000")
    slow = box.call("run_command", {"command": "sleep 5", "timeout_s": 1})
    assert slow.startswith("[timed out")
    assert box.call("run_command", {"command": "exit 3"}).startswith("[exit code 3;")


@pytest.mark.skipif(not commands.namespace_available(), reason="no mount namespace here")
def test_commands_cannot_read_the_task_dir(box: ToolBox, task: AgentTask) -> None:
    out = box.call("run_command", {"command": f"cat {task.task_dir}/evaluate.py; "
                                   f"ls {task.task_dir}; cat ../evaluate.py"})
    assert "GOLD_SECRET" not in out
    assert "migrations" not in out


def test_run_project_on_emulated_chips(box: ToolBox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SERVICE_API_KEY", "k1")
    out = box.call("run_project", {})
    assert "[exit code 0;" in out
    assert "PJRT_DEVICE CPU" in out and "CPU_NUM_DEVICES 4" in out
    assert "seed 7" in out and "SECRET_VISIBLE False" in out
    assert not (box.root / "out.txt").exists()  # ran in a scratch copy


def test_human_modes(tmp_path: Path) -> None:
    never = parse_human("never")
    assert never.ask("help?").answer == NO_HELP and never.interventions == 1
    script = tmp_path / "answers.yaml"
    script.write_text("- use bf16\n- yes\n")  # `yes` must stay a string
    scripted = parse_human(f"script:{script}")
    assert [scripted.ask(q).answer for q in ("a", "b", "c")] == ["use bf16", "yes",
                                                                  SCRIPT_EXHAUSTED]
    assert scripted.interventions == 3  # every call counts, the unanswered third too
    assert scripted.fresh().ask("again").answer == "use bf16"
    js = tmp_path / "a.json"
    js.write_text(json.dumps(["one"]))
    assert parse_human(f"script:{js}").answers == ["one"]
    live = Human("ask", stdin=io.StringIO("line one\nline two\n\n"), stdout=io.StringIO())
    ex = live.ask("which dtype?")
    assert (ex.answer, ex.source, live.interventions) == ("line one\nline two", "human", 1)
    silent = Human("ask", stdin=io.StringIO(""), stdout=io.StringIO())
    assert silent.ask("?").source == "none" and silent.interventions == 1
    for bad in ("sometimes", "script:", f"script:{tmp_path / 'missing.yaml'}"):
        with pytest.raises(UserError):
            parse_human(bad)
    (tmp_path / "d.yaml").write_text("a: 1\n")
    with pytest.raises(UserError, match="list"):
        parse_human(f"script:{tmp_path / 'd.yaml'}")


def test_ask_human_and_finish_tools(box: ToolBox) -> None:
    assert box.call("ask_human", {"question": "?"}) == NO_HELP
    assert box.call("finish", {"claimed_success": True, "summary": "done"}) == "finished"
    assert box.finished is not None and box.finished.claimed_success
    with pytest.raises(ToolError, match="unknown tool"):
        box.call("rm_rf", {})
