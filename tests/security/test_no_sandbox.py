"""Without bubblewrap nothing untrusted runs unless the user says --unsafe-no-sandbox, and then
every record says so and the leaderboard check refuses it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpu2tpu import sandbox
from gpu2tpu.errors import UserError
from gpu2tpu.harness.evaluate import evaluate_predictions
from gpu2tpu.sandbox import process as sandboxed


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "candidates", lambda: [])  # neither the system's nor the bundled
    monkeypatch.setattr(sandbox, "_TOOL", [])
    yield
    sandboxed.configure(unsafe=False)


def test_evaluate_refuses_without_bwrap(no_bwrap: None, tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    with pytest.raises(sandbox.SandboxUnavailable, match="--unsafe-no-sandbox"):
        evaluate_predictions(preds, "r", tmp_path / "runs")
    assert not (tmp_path / "runs" / "r" / "summary.json").exists()


def test_unsafe_runs_are_marked_and_refused_by_the_leaderboard_check(no_bwrap: None,
                                                                      tmp_path: Path) -> None:
    box = sandbox.Confinement(writable=[tmp_path], unsafe=True)
    res = sandbox.run([sys.executable, "-c", "print('ran')"], tmp_path, sandbox.sandbox_env({}), box,
                      sandbox.Limits(timeout_s=60), tmp_path / "out.log", tmp_path / "err.log")
    assert res.exit_code == 0 and res.sandbox == "none"
    assert (tmp_path / "out.log").read_text() == "ran\n"
    with pytest.raises(UserError, match="sandbox none"):
        sandbox.require_sandboxed({"agent": "a", "task_id": "t", "runtime": {"sandbox": "none"}})
    with pytest.raises(UserError, match="unrecorded"):
        sandbox.require_sandboxed({"agent": "a", "task_id": "t", "runtime": {}})
    sandbox.require_sandboxed({"runtime": {"sandbox": "bwrap"}})
