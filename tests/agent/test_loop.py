"""The tool-use loop over real HTTP: the anthropic SDK against a scripted local Messages API."""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fake_messages_api import API_KEY, ScriptedAPI, error, text_turn, tool_turn, usage

from gpu2tpu.agent import commands
from gpu2tpu.agent.human import Human
from gpu2tpu.agent.loop import AgentConfig, run_attempt
from gpu2tpu.agent.pricing import Price
from gpu2tpu.agent.runner import RunPlan, make_client, run_agent
from gpu2tpu.agent.task import AgentTask
from gpu2tpu.cli import main

PRED_KEYS = {"schema_version", "task_id", "agent", "model", "patch", "claimed_success",
             "agent_cost_usd", "input_tokens", "output_tokens", "human_interventions",
             "attempt", "wall_time_s", "trajectory"}

HAPPY = [
    tool_turn(("list_files", {}), use=usage(1000, 50, cache_write=2000)),
    tool_turn(("read_file", {"path": "train.py"}), use=usage(200, 40, cache_read=3000)),
    tool_turn(("edit_file", {"path": "train.py", "old_text": 'DEVICE = "cuda"',
                             "new_text": 'DEVICE = "xla"'}), use=usage(300, 60, cache_read=3200)),
    tool_turn(("run_command", {"command": "python train.py --seed 1 && rm out.txt"}),
              use=usage(400, 30, cache_read=3500)),
    tool_turn(("finish", {"claimed_success": True, "summary": "device is xla"}),
              use=usage(500, 20, cache_read=3900)),
]
# Sonnet 4.5: $3 in, $15 out, $3.75 cache write, $0.30 cache read per million tokens.
HAPPY_COST = (Decimal(2400) * 3 + Decimal(200) * 15 + Decimal(2000) * Decimal("3.75")
              + Decimal(13600) * Decimal("0.30")) / 1_000_000


def _plan(tmp_path: Path, task: AgentTask, attempts: int = 1, **kw: Any) -> RunPlan:
    out = tmp_path / "run" / "preds.jsonl"
    return RunPlan(tasks=[task], attempts=attempts, out=out, trajectory_dir=out.parent / "traj",
                   **kw)


def _run(api: ScriptedAPI, cfg: AgentConfig, plan: RunPlan, price: Price,
         human: Human | None = None) -> list[dict[str, Any]]:
    client = make_client(API_KEY, api.url)
    return run_agent(client, cfg, plan, price, human or Human("never"), secrets=[API_KEY])


def test_happy_path_predictions_trajectory_and_cost(tmp_path: Path, task: AgentTask,
                                                    cfg: AgentConfig, price: Price) -> None:
    plan = _plan(tmp_path, task)
    with ScriptedAPI(HAPPY) as api:
        preds = _run(api, cfg, plan, price)
    lines = [json.loads(line) for line in plan.out.read_text().splitlines()]
    assert lines == preds and len(lines) == 1
    pred = lines[0]
    assert set(pred) == PRED_KEYS  # no `error` on success
    assert (pred["schema_version"], pred["task_id"], pred["agent"], pred["model"],
            pred["attempt"]) == (1, "toy", "gpu2tpu-baseline", "claude-sonnet-4-5", 1)
    assert pred["claimed_success"] is True and pred["human_interventions"] == 0
    assert pred["agent_cost_usd"] == float(HAPPY_COST) == 0.02178
    assert pred["input_tokens"] == 2400 + 2000 + 13600 and pred["output_tokens"] == 200
    assert pred["patch"].startswith("diff --git a/train.py b/train.py\n")
    assert '+DEVICE = "xla"' in pred["patch"] and "out.txt" not in pred["patch"]
    # The patch applies to the original project with git apply.
    target = tmp_path / "apply"
    shutil.copytree(task.project_dir, target)
    (tmp_path / "p.diff").write_text(pred["patch"])
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=target, check=True)
    assert 'DEVICE = "xla"' in (target / "train.py").read_text()
    # Requests: real SDK headers, tools offered, tool results fed back in order.
    assert len(api.requests) == 5
    # The key travels only in the auth header (x-api-key or a bearer token, per SDK version).
    assert all(API_KEY in r["headers"].get("x-api-key", "") + r["headers"].get("authorization", "")
               for r in api.requests)
    first = api.requests[0]["body"]
    assert first["model"] == "claude-sonnet-4-5"
    assert {t["name"] for t in first["tools"]} >= {"list_files", "read_file", "edit_file",
                                                   "write_file", "run_command", "run_project",
                                                   "ask_human", "finish"}
    assert "Toy task" in first["messages"][0]["content"][0]["text"]
    last = api.requests[-1]["body"]["messages"]
    result = last[-1]["content"][0]
    assert result["type"] == "tool_result" and "[exit code 0;" in result["content"]
    assert "device cuda" not in result["content"] and "device xla seed 1" in result["content"]
    assert last[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in b for m in last for b in m["content"]) == 1
    # Trajectory: versioned, complete, priced, and without the key.
    traj_path = plan.out.parent / pred["trajectory"]
    assert pred["trajectory"] == "traj/toy.1.json"
    text = traj_path.read_text()
    assert API_KEY not in text
    traj = json.loads(text)
    assert traj["format_version"] == 1 and traj["task_id"] == "toy"
    assert traj["price"]["table_version"] and traj["system_prompt"].startswith("You are")
    calls = [e for e in traj["events"] if e["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["list_files", "read_file", "edit_file",
                                          "run_command", "finish"]
    api_calls = [e for e in traj["events"] if e["type"] == "api_call"]
    assert sum(Decimal(e["cost_usd"]) for e in api_calls) == HAPPY_COST
    assert Decimal(traj["outcome"]["cost_usd"]) == HAPPY_COST
    assert traj["outcome"]["stop"] == "finish" and traj["outcome"]["patch_files"] == ["train.py"]
    assert len(traj["messages"]) == 11  # task, then 5 x (assistant turn, tool results)


def test_rate_limit_then_success(tmp_path: Path, task: AgentTask, cfg: AgentConfig,
                                 price: Price) -> None:
    script = [error(429, "rate_limit_error", "slow down", {"retry-after": "0"}),
              error(529, "overloaded_error", "busy"),
              tool_turn(("finish", {"claimed_success": False, "summary": "gave up"}))]
    plan = _plan(tmp_path, task)
    with ScriptedAPI(script) as api:
        (pred,) = _run(api, cfg, plan, price)
    assert len(api.requests) == 3
    assert "error" not in pred and pred["claimed_success"] is False
    traj = json.loads((plan.out.parent / pred["trajectory"]).read_text())
    (retry,) = [e for e in traj["events"] if e["type"] == "retries"]
    assert [r["status"] for r in retry["retries"]] == [429, 529]


def test_server_error_is_a_clear_failed_attempt(tmp_path: Path, task: AgentTask,
                                                cfg: AgentConfig, price: Price) -> None:
    script = [tool_turn(("list_files", {})), error(500, "api_error", "kaboom")]
    plan = _plan(tmp_path, task)
    with ScriptedAPI(script) as api:
        (pred,) = _run(api, cfg, plan, price)
    assert len(api.requests) == 2  # a 500 is not retried
    assert pred["claimed_success"] is False
    assert pred["error"].startswith("Anthropic API error 500 api_error: kaboom")
    assert pred["patch"] == "" and pred["agent_cost_usd"] > 0
    traj = json.loads((plan.out.parent / pred["trajectory"]).read_text())
    assert traj["outcome"]["stop"] == "api_error"


def test_rate_limit_exhausted_retries_is_an_error(tmp_path: Path, task: AgentTask,
                                                  cfg: AgentConfig, price: Price) -> None:
    cfg.max_retries = 2
    plan = _plan(tmp_path, task)
    with ScriptedAPI([error(429, "rate_limit_error", "no")] * 3) as api:
        (pred,) = _run(api, cfg, plan, price)
    assert len(api.requests) == 3 and "after 3 tries" in pred["error"]


def test_cost_limit_stops_before_the_next_call(tmp_path: Path, task: AgentTask,
                                               cfg: AgentConfig, price: Price) -> None:
    # Each turn costs 1000*3e-6 + 1000*15e-6 = $0.018; the limit allows starting two calls.
    turn = tool_turn(("list_files", {}), use=usage(1000, 1000))
    plan = _plan(tmp_path, task, cost_limit_usd=Decimal("0.03"))
    with ScriptedAPI([turn] * 5) as api:
        (pred,) = _run(api, cfg, plan, price)
    assert len(api.requests) == 2
    assert pred["claimed_success"] is False and "cost limit reached" in pred["error"]
    assert pred["agent_cost_usd"] == 0.036


def test_total_cost_limit_spans_tasks_and_attempts(tmp_path: Path, task: AgentTask,
                                                   cfg: AgentConfig, price: Price) -> None:
    turn = tool_turn(("finish", {"claimed_success": True, "summary": "s"}), use=usage(1000, 0))
    plan = _plan(tmp_path, task, attempts=3, total_cost_limit_usd=Decimal("0.005"))
    with ScriptedAPI([turn] * 3) as api:
        preds = _run(api, cfg, plan, price)
    assert len(api.requests) == 2 and [p["attempt"] for p in preds] == [1, 2, 3]
    assert "error" not in preds[1] and "run cost limit" in preds[2]["error"]
    assert [p["trajectory"] for p in preds] == ["traj/toy.1.json", "traj/toy.2.json",
                                                "traj/toy.3.json"]


def test_refused_reads_leak_nothing(tmp_path: Path, task: AgentTask, cfg: AgentConfig,
                                    price: Price) -> None:
    script = [
        tool_turn(("read_file", {"path": "../evaluate.py"}),
                  ("read_file", {"path": "../migrations/gold.patch"}),
                  ("read_file", {"path": str(task.task_dir / "migrations" / "gold.patch")}),
                  ("list_files", {"path": "../"}),
                  ("read_file", {"path": "evaluate.py"})),
        tool_turn(("finish", {"claimed_success": False, "summary": "no"})),
    ]
    plan = _plan(tmp_path, task)
    with ScriptedAPI(script) as api:
        _run(api, cfg, plan, price)
    results = api.requests[1]["body"]["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [True] * 5
    assert all(r["content"].startswith("refused") for r in results[:4])
    assert "no such file" in results[4]["content"]
    assert "GOLD_SECRET" not in json.dumps(api.requests)


def test_nudge_max_steps_and_human_script(tmp_path: Path, task: AgentTask, cfg: AgentConfig,
                                          price: Price) -> None:
    cfg.max_steps = 3
    script = [text_turn("thinking out loud"), tool_turn(("ask_human", {"question": "bf16?"})),
              tool_turn(("ask_human", {"question": "more?"}))]
    plan = _plan(tmp_path, task)
    with ScriptedAPI(script) as api:
        (pred,) = _run(api, cfg, plan, price, Human("script", ["yes, bf16"]))
    assert api.requests[1]["body"]["messages"][-1]["content"][0]["text"].startswith("Continue")
    assert api.requests[2]["body"]["messages"][-1]["content"][0]["content"] == "yes, bf16"
    assert pred["human_interventions"] == 2 and "step limit" in pred["error"]  # both asks count
    traj = json.loads((plan.out.parent / pred["trajectory"]).read_text())
    humans = [e for e in traj["events"] if e["type"] == "human"]
    assert [(h["question"], h["source"]) for h in humans] == [("bf16?", "script"),
                                                               ("more?", "none")]


def test_attempts_start_from_the_original(tmp_path: Path, task: AgentTask, cfg: AgentConfig,
                                          price: Price) -> None:
    cfg.keep_work = True
    edit = tool_turn(("write_file", {"path": "new.py", "content": "x = 1\n"}))
    done = tool_turn(("finish", {"claimed_success": True, "summary": "s"}))
    with ScriptedAPI([edit, done, done]) as api:
        client = make_client(API_KEY, api.url)
        first = run_attempt(client, cfg, task, 1, price, Human("never"), [])
        second = run_attempt(client, cfg, task, 2, price, Human("never"), [])
    assert "new.py" in first.prediction["patch"] and second.prediction["patch"] == ""
    assert Path(first.trajectory.header["work_dir"]).is_dir()


def test_cli_end_to_end(tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    out = tmp_path / "preds.jsonl"

    def args(task: str = "toy", price: list[str] | None = None, url: str = "http://127.0.0.1:9"
             ) -> list[str]:
        return ["agent", "run", "--tasks", task, "--task-dir", str(tasks_dir), "--model",
                "my-local-model", *(["--price-per-mtok", "1,2"] if price is None else price),
                "--out", str(out), "--max-steps", "4", "--work-dir", str(tmp_path),
                "--base-url", url]

    peek = (f"cat {tasks_dir}/toy/evaluate.py {tasks_dir}/toy/migrations/gold.patch {out}; "
            f"ls {tmp_path / 'traj'}")
    done = tool_turn(("finish", {"claimed_success": True, "summary": "ok"}),
                     use=usage(1_000_000, 1_000_000))
    with ScriptedAPI([done, tool_turn(("run_command", {"command": peek})), done]) as api:
        assert main([*args(url=api.url), "--attempts", "2"]) == 0
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["attempt"] for p in preds] == [1, 2]
    assert preds[0]["model"] == "my-local-model" and preds[0]["agent_cost_usd"] == 3.0
    assert (tmp_path / "traj" / "toy.1.json").is_file()
    assert "wrote 2 predictions" in capsys.readouterr().out
    seen = api.requests[2]["body"]["messages"][-1]["content"][0]["content"]
    if commands.namespace_available():  # attempt 2 cannot see the task, attempt 1 or the preds
        assert "GOLD_SECRET" not in seen and "toy.1.json" not in seen
        assert "my-local-model" not in seen and "No such file" in seen
    # Errors before any call: existing output, unknown model, missing key, unknown task.
    assert main(args()) == 2 and "--append" in capsys.readouterr().err
    out.unlink()
    assert main(args(price=[])) == 2 and "--price-per-mtok" in capsys.readouterr().err
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(args()) == 2 and "ANTHROPIC_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    assert main(args(task="nope")) == 2 and "known: toy" in capsys.readouterr().err
    assert not out.exists()  # nothing is written before every check passed
    assert main(["agent"]) == 2  # no subcommand: help


def test_key_in_any_output_is_redacted(tmp_path: Path, task: AgentTask, cfg: AgentConfig,
                                       price: Price, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)  # must not reach the command either
    script = [tool_turn(("run_command", {"command": f"echo {API_KEY}; echo k=$ANTHROPIC_API_KEY"})),
              tool_turn(("finish", {"claimed_success": False, "summary": API_KEY}))]
    plan = _plan(tmp_path, task)
    with ScriptedAPI(script) as api:
        (pred,) = _run(api, cfg, plan, price)
    result = api.requests[1]["body"]["messages"][-1]["content"][0]["content"]
    assert result.endswith("k=\n")  # the environment variable was stripped
    text = (plan.out.parent / pred["trajectory"]).read_text()
    assert API_KEY not in text and "[REDACTED]" in text
    assert API_KEY not in plan.out.read_text()


def test_long_conversations_elide_old_tool_output(tmp_path: Path, task: AgentTask,
                                                  cfg: AgentConfig, price: Price) -> None:
    cfg.context_tokens = 5000
    big = usage(6000, 10)
    script = [tool_turn(("read_file", {"path": "train.py"}), use=big) for _ in range(5)]
    script.append(tool_turn(("finish", {"claimed_success": False, "summary": "s"})))
    plan = _plan(tmp_path, task)
    with ScriptedAPI(script) as api:
        (pred,) = _run(api, cfg, plan, price)
    sent = api.requests[-1]["body"]["messages"]
    results = [b["content"] for m in sent for b in m["content"] if b.get("type") == "tool_result"]
    assert results[0].startswith("[older tool output elided") and "DEVICE" in results[-1]
    traj = json.loads((plan.out.parent / pred["trajectory"]).read_text())
    kept = [b["content"] for m in traj["messages"] for b in m["content"]
            if b.get("type") == "tool_result"]
    assert all("DEVICE" in k for k in kept[:-1])  # the trajectory keeps every output
