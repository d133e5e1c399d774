"""Running the agent's commands: scrubbed environment, time limit, truncated output, isolation.

Isolation: on Linux the command runs in a private mount namespace (`unshare -rm`) in which the
task directories (gold and broken migrations, evaluate.py, other tasks), their repository's
history and any extra hidden paths are covered by empty read-only tmpfs mounts. Where that is not
available the command runs plainly and the trajectory says `isolation: none`.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
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


_NAMESPACE_OK: bool | None = None


def namespace_available() -> bool:
    """Whether `unshare -rm` works here (checked once)."""
    global _NAMESPACE_OK
    if _NAMESPACE_OK is None:
        try:
            probe = subprocess.run(
                ["unshare", "-rm", "sh", "-c", "mount -t tmpfs none /tmp 2>/dev/null || "
                 "mount -t tmpfs none /mnt"],
                capture_output=True,
                timeout=10,
            )
            _NAMESPACE_OK = probe.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _NAMESPACE_OK = False
    return _NAMESPACE_OK


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


def _wrap(argv: list[str], hide: Sequence[Path]) -> list[str]:
    """Run `argv` in a mount namespace with `hide` covered by empty read-only tmpfs mounts."""
    mounts = " && ".join(
        f"mount -t tmpfs -o ro,size=4k none {shlex.quote(str(p))}" for p in hide if p.is_dir()
    )
    files = [p for p in hide if not p.is_dir()]
    if files:  # a hidden plain file (e.g. a gitdir file) is covered by /dev/null
        binds = " && ".join(f"mount --bind /dev/null {shlex.quote(str(p))}" for p in files)
        mounts = f"{mounts} && {binds}" if mounts else binds
    script = f'{mounts or "true"} && exec "$@"'
    return ["unshare", "-rm", "sh", "-c", script, "gpu2tpu-sandbox", *argv]


def run(
    argv: list[str],
    cwd: Path,
    timeout_s: float,
    output_limit: int,
    env: Mapping[str, str] | None = None,
    hide: Sequence[Path] = (),
    isolate: bool = False,
) -> CommandResult:
    """Run `argv` in `cwd`; kill its whole process group at the time limit."""
    full_env = scrub_env(os.environ if env is None else env)
    cmd = _wrap(argv, hide) if isolate and hide else argv
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
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
