"""The dataset on disk and on the Hugging Face Hub: load (offline), download, publish."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any, Protocol

import yaml

DEFAULT_REPO_ID = "gpu2tpu/corpus"
CARD = "README.md"


class HubError(Exception):
    """A Hub operation failed for a reason the user must fix (bad repo id, auth, revision)."""


def embedded_dir() -> Path:
    from gpu2tpu.corpus import DATA_DIR

    return DATA_DIR


def _card_configs(data_dir: Path) -> dict[str, dict[str, str]]:
    """config -> split -> parquet path, read from the card's YAML header."""
    text = (data_dir / CARD).read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise FileNotFoundError(f"{data_dir / CARD} has no YAML header")
    meta = yaml.safe_load(text.split("---\n", 2)[1]) or {}
    return {c["config_name"]: {f["split"]: f["path"] for f in c.get("data_files", [])}
            for c in meta.get("configs", [])}


def load(config: str = "projects", split: str | None = None, data_dir: Path | None = None) -> Any:
    """The built dataset as `datasets.Dataset` (one split) or `DatasetDict`, read offline.

    Empty splits are not stored; asking for one returns an empty Dataset with the features.
    """
    import datasets

    from gpu2tpu.corpus.build import TASK_SPLITS
    from gpu2tpu.corpus.check import SPLITS
    from gpu2tpu.corpus.schema import PROJECT_FEATURES, TASK_FEATURES

    features = {"projects": PROJECT_FEATURES, "tasks": TASK_FEATURES}.get(config)
    known = {"projects": SPLITS, "tasks": TASK_SPLITS}.get(config)
    if features is None or known is None:
        raise ValueError(f"unknown config {config!r}: use 'projects' or 'tasks'")
    root = data_dir or embedded_dir()
    if not (root / CARD).exists():
        raise FileNotFoundError(f"no built corpus in {root}: run `gpu2tpu corpus build`")
    files = _card_configs(root).get(config, {})
    if split is not None and split not in known:
        raise ValueError(f"unknown split {split!r} of {config!r}: one of {', '.join(known)}")
    wanted = [split] if split else list(known)
    parts = {}
    for name in wanted:
        if name in files:
            table = datasets.load_dataset("parquet", data_files={name: str(root / files[name])},
                                          features=features, split=name)
        else:
            table = datasets.Dataset.from_dict({k: [] for k in features}, features=features,
                                               split=name)
        parts[name] = table
    return parts[split] if split else datasets.DatasetDict(parts)


class HubApi(Protocol):
    """The part of `huggingface_hub.HfApi` that publish uses (a fake can stand in, in tests)."""

    def create_repo(self, repo_id: str, *, repo_type: str | None = ..., exist_ok: bool = ...,
                    private: bool | None = ..., token: str | None = ...) -> Any: ...

    def upload_folder(self, *, repo_id: str, folder_path: str, repo_type: str | None = ...,
                      path_in_repo: str | None = ..., commit_message: str | None = ...,
                      ignore_patterns: Any = ..., token: str | None = ...) -> Any: ...

    def upload_file(self, *, path_or_fileobj: Any, path_in_repo: str, repo_id: str,
                    repo_type: str | None = ..., commit_message: str | None = ...,
                    token: str | None = ...) -> Any: ...


def publish_plan(data_dir: Path) -> list[str]:
    """Files publish uploads, data first and the card last (relative paths)."""
    if not (data_dir / CARD).exists():
        raise HubError(f"no built corpus in {data_dir}: run `gpu2tpu corpus build` first")
    files = sorted(p.relative_to(data_dir).as_posix() for p in data_dir.rglob("*") if p.is_file())
    return [f for f in files if f != CARD] + [CARD]


def publish(repo_id: str, data_dir: Path | None = None, api: HubApi | None = None,
            token: str | None = None, private: bool = False, dry_run: bool = False) -> list[str]:
    """Create the dataset repo (if needed), upload the data, then the card. Returns the files."""
    root = data_dir or embedded_dir()
    plan = publish_plan(root)
    if dry_run:
        return plan
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    revision = (root / "REVISION").read_text().strip() if (root / "REVISION").exists() else "?"
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private, token=token)
    api.upload_folder(repo_id=repo_id, folder_path=str(root), repo_type="dataset",
                      ignore_patterns=[CARD], token=token,
                      commit_message=f"gpu2tpu corpus {revision}: data")
    api.upload_file(path_or_fileobj=str(root / CARD), path_in_repo=CARD, repo_id=repo_id,
                    repo_type="dataset", token=token,
                    commit_message=f"gpu2tpu corpus {revision}: card")
    return plan


def _is_connection_error(exc: BaseException) -> bool:
    """True for 'could not reach the Hub' (then fall back), False for errors the user must fix."""
    from huggingface_hub import errors

    if isinstance(exc, (errors.RepositoryNotFoundError, errors.RevisionNotFoundError,
                        errors.GatedRepoError)):
        return False
    if isinstance(exc, (errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled,
                        ConnectionError, TimeoutError)):
        return True
    for module in ("httpx2", "httpx", "requests"):  # whichever HTTP client the Hub uses
        try:
            client = __import__(module)
        except ImportError:
            continue
        kinds = tuple(getattr(client, n) for n in ("TransportError", "ConnectionError", "Timeout")
                      if isinstance(getattr(client, n, None), type))
        if kinds and isinstance(exc, kinds):
            return True
    cause = exc.__cause__ or exc.__context__
    return cause is not None and _is_connection_error(cause)


def download(repo_id: str = DEFAULT_REPO_ID, revision: str | None = None, to: Path | None = None,
             endpoint: str | None = None, token: str | None = None, cache_dir: Path | None = None,
             log: Any = None) -> tuple[Path, bool]:
    """Fetch the dataset from the Hub; on a connection failure use the embedded copy.

    Returns (directory, from_hub). The Hub copy lands in the huggingface_hub cache (a snapshot
    cached earlier is reused offline); with `to`, the files (Hub or embedded) are copied there.
    """
    from huggingface_hub import snapshot_download

    log = log or (lambda msg: print(msg, file=sys.stderr))
    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None
    try:
        path = Path(snapshot_download(repo_id=repo_id, repo_type="dataset", revision=revision,
                                      cache_dir=str(cache_dir) if cache_dir else None,
                                      endpoint=endpoint, token=token))
        if to is None:
            return path, True
        to.mkdir(parents=True, exist_ok=True)
        shutil.copytree(path, to, dirs_exist_ok=True)
        return to, True
    except Exception as exc:  # noqa: BLE001 - classified just below
        if not _is_connection_error(exc):
            raise HubError(f"could not download {repo_id}"
                           f"{'@' + revision if revision else ''}: {exc}") from exc
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    src = embedded_dir()
    if not (src / CARD).exists():
        raise HubError(f"the Hub is unreachable ({reason}) and the package has no built corpus")
    stamp = (src / "REVISION").read_text().strip() if (src / "REVISION").exists() else "?"
    note = f"; revision {revision} was asked for" if revision else ""
    log(f"gpu2tpu: the Hub is unreachable ({reason}); using the corpus embedded in the package "
        f"(revision {stamp}{note})")
    if to is None:
        return src, False
    to.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, to, dirs_exist_ok=True)
    return to, False
