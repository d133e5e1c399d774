"""Running the agent's commands: scrubbed environment, time limit, truncated output, isolation.

Isolation: the command runs in the harness's one execution primitive (gpu2tpu.harness.sandbox,
bubblewrap): no network (model calls are made by the agent process, outside), a read-only system
and install, only its working directory writable, a private /tmp, its own PID namespace, an
allow-listed environment, and the task directories (gold and broken migrations, evaluate.py,
other tasks), their repository's history, the reference cache, $HOME, runs and any extra hidden
paths covered by empty tmpfs mounts. Where bwrap is not available the command runs plainly and the
trajectory says `isolation: none`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# Environment variables never passed to the agent's commands (credentials of any kind).
_SECRET = re.compile(
    r"(API_?KEY|(^|_)TOKENS?(_|$)|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|SESSION_KEY|_AUTH$|^AUTH_"
    r"|^AWS_|^ANTHROPIC_|^OPENAI_|^AZURE_|^GOOGLE_APPLICATION|^GH_|^GITHUB_|^HF_TOKEN"
    r"|^HUGGING_FACE_HUB_TOKEN|^NETRC$|^SSH_AUTH_SOCK$)",
    re.IGNORECASE,
)


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of `env` without credentials."""
    return {k: v for k, v in env.items() if not _SECRET.search(k)}


def truncate(text: str, limit: int) -> str:
    """Keep the head and the (more useful) tail of long output, saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


@dataclass
class CommandResult:
    exit_code: int | None  # None when killed at the time limit
    timed_out: bool
    wall_s: float
    output: str  # stdout and stderr interleaved, truncated

    def render(self) -> str:
        status = (
            "timed out (killed)" if self.timed_out else f"exit code {self.exit_code}"
        )
        return f"[{status}; {self.wall_s:.1f}s]\n{self.output}"


def namespace_available() -> bool:
    """Whether the sandbox (bubblewrap) works here (checked once)."""
    from gpu2tpu import sandbox

    return sandbox.available()


def hidden_paths(task_dirs: Sequence[Path], extra: Sequence[Path] = ()) -> list[Path]:
    """What the agent's commands must not see: the tasks, their repository history, extras."""
    out: list[Path] = []
    for d in [*task_dirs, *extra]:
        d = d.resolve()
        if d.exists() and d not in out:
            out.append(d)
    for d in task_dirs:
        for parent in d.resolve().parents:
            git = parent / ".git"
            if git.exists() and git not in out:
                out.append(git)
                break
    return out


def run(
    argv: list[str],
    cwd: Path,
    timeout_s: float,
    output_limit: int,
    env: Mapping[str, str] | None = None,
    hide: Sequence[Path] = (),
    isolate: bool = False,
) -> CommandResult:
    """Run `argv` in `cwd`; with `isolate`, inside the sandbox (only `cwd` writable, `hide` and
    the grader's paths invisible, no network); every process of the command ends with it."""
    if isolate:
        return _run_sandboxed(argv, cwd, timeout_s, output_limit, env, hide)
    full_env = scrub_env(os.environ if env is None else env)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a detached grandchild still holds the pipe
            proc.kill()
            out = b"[output lost: a detached process kept running after the time limit]"
    wall = time.monotonic() - start
    text = out.decode("utf-8", errors="replace")
    return CommandResult(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        wall_s=round(wall, 3),
        output=truncate(text, output_limit),
    )


def _run_sandboxed(argv: list[str], cwd: Path, timeout_s: float, output_limit: int,
                   env: Mapping[str, str] | None, hide: Sequence[Path]) -> CommandResult:
    from gpu2tpu import sandbox
    from gpu2tpu.sandbox import process as sandboxed

    # only what the caller adds to this process's environment (the task's device settings)
    added = {k: v for k, v in (env or {}).items() if os.environ.get(k) != v}
    box = sandboxed.confinement([cwd], list(hide))
    with tempfile.TemporaryDirectory(prefix="gpu2tpu-cmd-") as tmp:
        log = Path(tmp) / "output.log"
        res = sandbox.run(argv, cwd, sandbox.sandbox_env(scrub_env(added)), box,
                          sandbox.Limits(timeout_s=timeout_s, output_bytes=4 * sandbox.MiB,
                                         term_grace_s=2.0), log, None)
        text = log.read_bytes().decode("utf-8", errors="replace")
    return CommandResult(exit_code=None if res.timed_out else res.exit_code,
                         timed_out=res.timed_out, wall_s=round(res.wall_s, 3),
                         output=truncate(text, output_limit))
