"""A scripted Messages API on 127.0.0.1: replays responses to the real anthropic SDK over HTTP."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A scripted reply: (status, JSON body, extra headers), or a function of the request body.
Reply = tuple[int, dict[str, Any], dict[str, str]]
Step = Reply | Callable[[dict[str, Any]], Reply]

API_KEY = "sk-ant-test-0123456789abcdef-SECRET"
_ids = itertools.count(1)


def usage(inp: int = 100, out: int = 20, cache_write: int = 0, cache_read: int = 0
          ) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out,
            "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read}


def tool_turn(*calls: tuple[str, dict[str, Any]], text: str | None = None,
              use: dict[str, int] | None = None) -> Reply:
    """An assistant turn calling tools: tool_turn(("read_file", {"path": "a.py"}), ...)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for name, args in calls:
        content.append({"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name,
                        "input": args})
    return 200, _message(content, "tool_use", use), {}


def text_turn(text: str, use: dict[str, int] | None = None) -> Reply:
    return 200, _message([{"type": "text", "text": text}], "end_turn", use), {}


def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    return status, {"type": "error", "error": {"type": kind, "message": message}}, headers or {}


def _message(content: list[dict[str, Any]], stop: str, use: dict[str, int] | None
             ) -> dict[str, Any]:
    return {"id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant",
            "model": "scripted", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": use or usage()}


class ScriptedAPI:
    """Serves POST /v1/messages from `script`, in order; records every request."""

    def __init__(self, script: Sequence[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []  # {"body": ..., "headers": ...}
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                api.requests.append({"path": self.path, "body": body,
                                     "headers": {k.lower(): v for k, v in self.headers.items()}})
                if not self.path.startswith("/v1/messages"):
                    status, reply, extra = error(404, "not_found_error", self.path)
                elif not api.script:
                    status, reply, extra = error(500, "api_error", "script exhausted")
                else:
                    step = api.script.pop(0)
                    status, reply, extra = step(body) if callable(step) else step
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{len(api.requests)}")
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> ScriptedAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
