"""Hub paths for real: snapshot_download against a local HTTP Hub, offline fallback, publish."""

from __future__ import annotations

import inspect
import socket
from pathlib import Path
from typing import Any

import pytest
from corpus_fake_hub import COMMIT, FakeHub
from huggingface_hub import HfApi

import gpu2tpu.corpus
from gpu2tpu.cli import main
from gpu2tpu.corpus.build import build
from gpu2tpu.corpus.hub import HubError, download, load, publish


@pytest.fixture(scope="module")
def built(small, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built") / "ds"
    build(out, small["projects"], small["curation"], small["tasks"])
    return out


@pytest.fixture
def embedded(built, monkeypatch) -> Path:
    """Point the package's embedded copy at the small built dataset."""
    monkeypatch.setattr(gpu2tpu.corpus, "DATA_DIR", built)
    return built


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there any more


def _same_tree(a: Path, b: Path) -> None:
    files = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b).as_posix() for p in b.rglob("*")
                                     if p.is_file() and ".cache" not in p.parts)
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_download_from_hub(built, tmp_path):
    with FakeHub("gpu2tpu/corpus", built) as hub:
        path, from_hub = download("gpu2tpu/corpus", revision="v1", to=tmp_path / "got",
                                  endpoint=hub.url, cache_dir=tmp_path / "cache")
    assert from_hub and path == tmp_path / "got"
    _same_tree(built, path)
    assert "GET /api/datasets/gpu2tpu/corpus/revision/v1" in hub.requests
    assert any(r.endswith(f"{COMMIT}/data/projects-main.parquet") for r in hub.requests)
    assert load("projects", "main", data_dir=path).num_rows == 2


def test_download_cli_from_hub(built, tmp_path, capsys):
    with FakeHub("gpu2tpu/corpus", built) as hub:
        code = main(["corpus", "download", "--endpoint", hub.url, "--to", str(tmp_path / "o"),
                     "--cache-dir", str(tmp_path / "cache")])
    assert code == 0 and "downloaded:" in capsys.readouterr().out
    _same_tree(built, tmp_path / "o")


def test_download_falls_back_to_embedded_copy(embedded, tmp_path):
    messages: list[str] = []
    path, from_hub = download("gpu2tpu/corpus", to=tmp_path / "copy", endpoint=_closed_port_url(),
                              cache_dir=tmp_path / "cache", log=messages.append)
    assert not from_hub and path == tmp_path / "copy"
    _same_tree(embedded, path)
    assert len(messages) == 1 and "unreachable" in messages[0]
    assert "embedded in the package" in messages[0]
    assert (embedded / "REVISION").read_text().strip() in messages[0]


def test_download_cli_fallback_message(embedded, tmp_path, capsys):
    assert main(["corpus", "download", "--endpoint", _closed_port_url(),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    out, err = capsys.readouterr()
    assert f"embedded copy: {embedded}" in out and "Hub is unreachable" in err


def test_download_unknown_repo_is_an_error_not_a_fallback(built, embedded, tmp_path):
    with FakeHub("gpu2tpu/corpus", built) as hub, pytest.raises(HubError, match="nobody/none"):
        download("nobody/none", endpoint=hub.url, cache_dir=tmp_path / "cache",
                 log=lambda m: pytest.fail(f"fell back: {m}"))


class FakeApi:
    """HfApi-shaped recorder: every call must bind to the real HfApi method's signature."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _record(self, name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
        bound = inspect.signature(getattr(HfApi, name)).bind(self, *args, **kw)
        self.calls.append((name, {k: v for k, v in bound.arguments.items() if k != "self"}))

    def create_repo(self, *args: Any, **kw: Any) -> str:
        self._record("create_repo", args, kw)
        return "https://hub/datasets/x"

    def upload_folder(self, *args: Any, **kw: Any) -> None:
        self._record("upload_folder", args, kw)

    def upload_file(self, *args: Any, **kw: Any) -> None:
        self._record("upload_file", args, kw)


def test_publish_creates_repo_then_data_then_card(built):
    api = FakeApi()
    files = publish("me/corpus", built, api=api, token="t0k")
    assert [name for name, _ in api.calls] == ["create_repo", "upload_folder", "upload_file"]
    create, folder, card = (kw for _, kw in api.calls)
    assert create["repo_id"] == "me/corpus" and create["repo_type"] == "dataset"
    assert create["exist_ok"] is True and create["token"] == "t0k"
    assert folder["folder_path"] == str(built) and folder["ignore_patterns"] == ["README.md"]
    assert folder["repo_type"] == "dataset"
    assert card["path_in_repo"] == "README.md"
    assert card["path_or_fileobj"] == str(built / "README.md")
    revision = (built / "REVISION").read_text().strip()
    assert revision in folder["commit_message"] and revision in card["commit_message"]
    assert files[-1] == "README.md" and "data/projects-main.parquet" in files


def test_publish_dry_run_calls_nothing(built, capsys):
    api = FakeApi()
    files = publish("me/corpus", built, api=api, dry_run=True)
    assert api.calls == [] and files[-1] == "README.md"
    assert main(["corpus", "publish", "--repo-id", "me/corpus", "--data-dir", str(built),
                 "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would upload to datasets/me/corpus" in out and "data/projects-main.parquet" in out


def test_publish_refuses_unbuilt_dir(tmp_path, capsys):
    with pytest.raises(HubError, match="corpus build"):
        publish("me/corpus", tmp_path, api=FakeApi())
    assert main(["corpus", "publish", "--repo-id", "x/y", "--data-dir", str(tmp_path)]) == 2
