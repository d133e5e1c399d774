"""The agent's tools: their JSON schemas for the Messages API and their implementations."""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu2tpu.agent import commands
from gpu2tpu.agent.human import Human
from gpu2tpu.agent.task import AgentTask
from gpu2tpu.agent.workspace import VCS_DIRS, PathRefused, confine

MAX_READ_CHARS = 60_000
MAX_LIST_ENTRIES = 400


def _tool(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict:
    schema = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": description, "input_schema": schema}


_PATH = {"type": "string", "description": "Path relative to the project root."}
TOOL_SPECS: list[dict[str, Any]] = [
    _tool("list_files", "List files (recursively) under a directory of the project.",
          {"path": {**_PATH, "default": "."}}, []),
    _tool("read_file", "Read a text file of the project. Optional 1-based line range.",
          {"path": _PATH, "start_line": {"type": "integer"}, "end_line": {"type": "integer"}},
          ["path"]),
    _tool("edit_file", "Replace exactly one occurrence of old_text with new_text in a file "
          "(old_text must match the file exactly, whitespace included, and be unique).",
          {"path": _PATH, "old_text": {"type": "string"}, "new_text": {"type": "string"}},
          ["path", "old_text", "new_text"]),
    _tool("write_file", "Create or overwrite a whole file (parent directories are created).",
          {"path": _PATH, "content": {"type": "string"}}, ["path", "content"]),
    _tool("run_command", "Run a bash command in the project root. Output is truncated; "
          "secrets are not in its environment. Files it creates become part of your migration "
          "unless you delete them.",
          {"command": {"type": "string"},
           "timeout_s": {"type": "integer", "description": "Time limit in seconds."}},
          ["command"]),
    _tool("run_project", "Run the task's command on the emulated target device "
          "(torch_xla on CPU with the target's chip count) in a scratch copy of the project, "
          "and show its output. Files it writes do not change your working copy.",
          {"timeout_s": {"type": "integer"}}, []),
    _tool("ask_human", "Ask the human supervising you a question (counts as an intervention).",
          {"question": {"type": "string"}}, ["question"]),
    _tool("finish", "End the task. Say whether you believe the migration succeeded.",
          {"claimed_success": {"type": "boolean"}, "summary": {"type": "string"}},
          ["claimed_success", "summary"]),
]


class ToolError(Exception):
    """A tool call that could not be done: its message goes back to the model as an error."""


@dataclass
class Finish:
    claimed_success: bool
    summary: str


@dataclass
class ToolBox:
    root: Path  # the working copy
    task: AgentTask
    human: Human
    hide: Sequence[Path] = ()
    isolate: bool = False
    command_timeout_s: int = 120
    max_command_timeout_s: int = 900
    output_limit: int = 20_000
    finished: Finish | None = None
    calls: dict[str, int] = field(default_factory=dict)

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run one tool; raises ToolError (or PathRefused) for a call that cannot be done."""
        self.calls[name] = self.calls.get(name, 0) + 1
        fn = getattr(self, f"_t_{name}", None)
        if fn is None or not isinstance(args, dict):
            raise ToolError(f"unknown tool {name!r} or malformed input")
        try:
            return str(fn(**args))
        except TypeError as exc:
            raise ToolError(f"bad arguments for {name}: {exc}") from exc
        except PathRefused as exc:
            raise ToolError(str(exc)) from exc

    def _path(self, path: str) -> Path:
        return confine(self.root, path)

    def _writable(self, path: str) -> Path:
        """A path the agent may change: inside the copy and not protected by the task."""
        p = self._path(path)
        rel = self._rel(p)
        for pattern in self.task.protected:
            pat = pattern.rstrip("/")
            if rel == pat or rel.startswith(pat + "/") or fnmatch.fnmatch(rel, pat):
                raise ToolError(f"refused: {rel} is protected by the task ({pattern})")
        return p

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root.resolve()).as_posix() or "."

    def _t_list_files(self, path: str = ".") -> str:
        base = self._path(path)
        if not base.is_dir():
            raise ToolError(f"{path}: not a directory")
        rows: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in VCS_DIRS and d != "__pycache__")
            for name in sorted(filenames):
                p = Path(dirpath) / name
                size = "link" if p.is_symlink() else f"{p.lstat().st_size} B"
                rows.append(f"{self._rel(p)}  ({size})")
                if len(rows) >= MAX_LIST_ENTRIES:
                    return "\n".join(rows) + f"\n[listing stopped at {MAX_LIST_ENTRIES} entries]"
        return "\n".join(rows) or "(no files)"

    def _t_read_file(self, path: str, start_line: int | None = None,
                     end_line: int | None = None) -> str:
        p = self._path(path)
        if not p.is_file():
            raise ToolError(f"{path}: no such file")
        data = p.read_bytes()
        if b"\x00" in data[:8192]:
            raise ToolError(f"{path}: binary file ({len(data)} bytes)")
        text = data.decode("utf-8", errors="replace")
        if start_line is not None or end_line is not None:
            lines = text.split("\n")
            lo = max(1, start_line or 1)
            hi = min(len(lines), end_line or len(lines))
            text = "\n".join(lines[lo - 1:hi])
        if len(text) > MAX_READ_CHARS:
            return text[:MAX_READ_CHARS] + (
                f"\n[file truncated at {MAX_READ_CHARS} characters; read a line range]"
            )
        return text

    def _t_edit_file(self, path: str, old_text: str, new_text: str) -> str:
        p = self._writable(path)
        if not p.is_file():
            raise ToolError(f"{path}: no such file")
        try:
            text = p.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{path}: not UTF-8 text; use write_file") from exc
        count = text.count(old_text) if old_text else 0
        if count == 0 and old_text and "\r" not in old_text and "\n" in old_text and "\r\n" in text:
            # a CRLF file: the model writes "\n"; the edit keeps the file's own line endings
            old_text, new_text = old_text.replace("\n", "\r\n"), _crlf(new_text)
            count = text.count(old_text)
        if count != 1:
            what = "not found" if count == 0 else f"found {count} times"
            raise ToolError(f"{path}: old_text {what}; it must match exactly once")
        p.write_bytes(text.replace(old_text, new_text, 1).encode("utf-8"))
        return f"edited {self._rel(p)}"

    def _t_write_file(self, path: str, content: str) -> str:
        p = self._writable(path)
        if p.is_dir():
            raise ToolError(f"{path}: is a directory")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8"))
        return f"wrote {self._rel(p)} ({len(content)} characters)"

    def _timeout(self, asked: int | None, default: int) -> int:
        return max(1, min(int(asked or default), self.max_command_timeout_s))

    def _t_run_command(self, command: str, timeout_s: int | None = None) -> str:
        result = commands.run(
            ["bash", "-c", command], self.root, self._timeout(timeout_s, self.command_timeout_s),
            self.output_limit, hide=self.hide, isolate=self.isolate,
        )
        return result.render()

    def _t_run_project(self, timeout_s: int | None = None) -> str:
        env = {**os.environ, **self.task.project_env()}
        with tempfile.TemporaryDirectory(prefix="gpu2tpu-run-") as scratch:
            copy = Path(scratch) / "project"
            shutil.copytree(self.root, copy, symlinks=True)
            result = commands.run(
                self.task.project_argv(), copy / self.task.workdir,
                self._timeout(timeout_s, self.task.timeout_s),
                self.output_limit, env=env, hide=self.hide, isolate=self.isolate,
            )
        return f"$ {self.task.display_command()}\n{result.render()}"

    def _t_ask_human(self, question: str) -> str:
        return self.human.ask(question).answer

    def _t_finish(self, claimed_success: bool, summary: str) -> str:
        self.finished = Finish(bool(claimed_success), str(summary))
        return "finished"


def _crlf(text: str) -> str:
    """`text` with every line ending CRLF (one already CRLF left as it is)."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
