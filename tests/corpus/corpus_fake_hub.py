"""A tiny stand-in for the Hugging Face Hub's HTTP API, serving one dataset folder on 127.0.0.1.

Enough of the protocol for `huggingface_hub.snapshot_download`: repo info, tree listing, and
file resolve (HEAD + GET). Unknown repos answer 404 with the Hub's `X-Error-Code`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self, repo_id: str, folder: Path) -> None:
        self.repo_id = repo_id
        self.files = {p.relative_to(folder).as_posix(): p.read_bytes()
                      for p in sorted(folder.rglob("*")) if p.is_file()}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_HEAD(self) -> None:  # noqa: N802
                hub.handle(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                hub.handle(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _send(self, h: BaseHTTPRequestHandler, status: int, data: bytes, body: bool,
              headers: dict[str, str] | None = None) -> None:
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if body:
            h.wfile.write(data)

    def handle(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlparse(h.path).path)
        self.requests.append(f"{h.command} {path}")
        api = f"/api/datasets/{self.repo_id}/"
        resolve = f"/datasets/{self.repo_id}/resolve/"
        if path.startswith(api + "revision/"):
            info = {"id": self.repo_id, "sha": COMMIT, "private": False,
                    "siblings": [{"rfilename": f} for f in self.files]}
            self._send(h, 200, json.dumps(info).encode(), body,
                       {"Content-Type": "application/json"})
        elif path.startswith(api + "tree/"):
            items = [{"type": "file", "path": f, "size": len(b),
                      "oid": hashlib.sha1(b).hexdigest()} for f, b in self.files.items()]
            self._send(h, 200, json.dumps(items).encode(), body,
                       {"Content-Type": "application/json"})
        elif path.startswith(resolve):
            name = path[len(resolve):].split("/", 1)[1]
            data = self.files.get(name)
            if data is None:
                self._send(h, 404, b"", body, {"X-Error-Code": "EntryNotFound"})
                return
            etag = hashlib.sha1(data).hexdigest()
            self._send(h, 200, data, body, {"X-Repo-Commit": COMMIT, "ETag": f'"{etag}"',
                                            "Content-Type": "application/octet-stream"})
        else:
            self._send(h, 404, b'{"error": "Repository not found"}', body,
                       {"X-Error-Code": "RepoNotFound", "Content-Type": "application/json"})
