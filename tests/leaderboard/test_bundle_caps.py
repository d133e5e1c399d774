"""`leaderboard verify` unpacks a stranger's archive: caps on members and uncompressed bytes (a gzip
bomb stops early), and no links, special files, absolute or `..` names; every refusal names the
problem and extracts nothing."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from test_bundle import write_inputs

from gpu2tpu.leaderboard import bundle
from gpu2tpu.leaderboard.bundle import pack, unpack
from gpu2tpu.leaderboard.runfiles import SubmissionRefused


def archive(path: Path, members: list[tuple[str, bytes | None, bytes]], **kw) -> Path:
    """A .tar.gz of (name, data or None for a directory, tar type) members."""
    with tarfile.open(path, "w:gz", **kw) as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else "bundle.json"
            info.size = len(data) if data is not None and kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if info.size else None)
    return path


def refused(tmp_path: Path, path: Path, message: str) -> None:
    dest = tmp_path / "dest"
    with pytest.raises(SubmissionRefused, match=message):
        unpack(path, dest)
    assert not dest.exists()  # checked before a byte is written


def test_a_packed_bundle_unpacks_within_the_caps(tmp_path: Path) -> None:
    write_inputs(tmp_path)
    pack(tmp_path / "my preds.jsonl", tmp_path / "meta.yaml", tmp_path / "b.tar.gz")
    manifest = unpack(tmp_path / "b.tar.gz", tmp_path / "dest")
    assert manifest["predictions"] == 2 and (tmp_path / "dest" / "predictions.jsonl").is_file()


def test_too_many_members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "MAX_MEMBERS", 5)
    many = archive(tmp_path / "many.tar.gz", [(f"f{i}", b"x", tarfile.REGTYPE) for i in range(6)])
    refused(tmp_path, many, "more than 5 members")


def test_too_many_bytes_in_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "MAX_TOTAL_BYTES", 1000)
    big = archive(tmp_path / "big.tar.gz",
                  [("a", b"x" * 600, tarfile.REGTYPE), ("b", b"y" * 600, tarfile.REGTYPE)])
    refused(tmp_path, big, "unpacks to more than 1000 bytes")


def test_a_gzip_bomb_stops_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "MAX_TOTAL_BYTES", 1 << 20)
    monkeypatch.setattr(bundle, "MAX_MEMBERS", 10)
    bomb = archive(tmp_path / "bomb.tar.gz", [("zeros", bytes(64 << 20), tarfile.REGTYPE)])
    assert bomb.stat().st_size < 1 << 20  # 64 MiB of zeros compress to almost nothing
    refused(tmp_path, bomb, "over|more than")
    # a header that is itself huge (a pax record) is read through the same cap
    with tarfile.open(tmp_path / "pax.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("a")
        info.pax_headers = {"comment": "x" * (8 << 20)}
        tar.addfile(info, io.BytesIO(b""))
    refused(tmp_path, tmp_path / "pax.tar.gz", "unpacks to more than")


def test_one_member_over_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "MAX_MEMBER_BYTES", 100)
    refused(tmp_path, archive(tmp_path / "m.tar.gz", [("a", b"x" * 101, tarfile.REGTYPE)]), "over 100 bytes")


@pytest.mark.parametrize(
    ("name", "kind", "message"),
    [("link", tarfile.SYMTYPE, "is a link or special file"), ("hard", tarfile.LNKTYPE, "is a link"),
     ("fifo", tarfile.FIFOTYPE, "special file"), ("../up.txt", tarfile.REGTYPE, "escapes the bundle"),
     ("trees/../../up.txt", tarfile.REGTYPE, "escapes"), ("/etc/cron.d/x", tarfile.REGTYPE, "absolute"),
     ("bad\x1b[2Jname", tarfile.REGTYPE, "control character")],
)
def test_unsafe_members(tmp_path: Path, name: str, kind: bytes, message: str) -> None:
    members = [("predictions.jsonl", b"{}\n", tarfile.REGTYPE), (name, b"x", kind)]
    refused(tmp_path, archive(tmp_path / "bad.tar.gz", members), message)
    assert not (tmp_path / "up.txt").exists()


def test_not_an_archive(tmp_path: Path) -> None:
    (tmp_path / "x.tar.gz").write_bytes(b"not gzip at all")
    refused(tmp_path, tmp_path / "x.tar.gz", "not a gpu2tpu bundle")
