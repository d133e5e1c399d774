"""`gpu2tpu agent run` without the `agent` extra (no anthropic package): one line that says what to
install, exit status 2, no traceback and nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpu2tpu.agent.cli import require_agent_extra
from gpu2tpu.errors import UserError

# None in sys.modules makes `import anthropic` fail exactly as when the package is not installed.
NO_ANTHROPIC = (
    "import sys; sys.modules['anthropic'] = None\n"
    "from gpu2tpu.cli import main\n"
    "sys.exit(main(['agent', 'run', '--tasks', 'cifar_amp', '--model', 'claude-x', '--out', 'p.jsonl']))\n"
)


def test_agent_run_without_the_extra_prints_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", NO_ANTHROPIC], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert 'pip install -e ".[agent]"' in lines[0] and 'pip install "gpu2tpu[agent]"' in lines[0]
    assert not (tmp_path / "p.jsonl").exists() and not (tmp_path / "traj").exists()


def test_the_check_passes_when_anthropic_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    require_agent_extra()  # installed in this environment (the dev extra pulls it in)
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(UserError, match=r"agent. extra"):
        require_agent_extra()
