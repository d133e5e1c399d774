"""Verified submissions: pack predictions into a bundle, re-execute it on the maintainers' side,
rank it. The round trip runs one practice task for real (gold + one broken migration)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.bundle import pack, unpack
from gpu2tpu.leaderboard.queries import run_view
from gpu2tpu.leaderboard.runfiles import SubmissionRefused
from gpu2tpu.leaderboard.schema import open_read_only
from gpu2tpu.tasks import TASKS_DIR

TASK = "cifar_amp"


def write_inputs(root: Path) -> None:
    mig = TASKS_DIR / TASK / "migrations"
    lines = [
        {"schema_version": 1, "task_id": TASK, "agent": "demo-gold",
         "patch": (mig / "gold.patch").read_text(),
         "claimed_success": True, "agent_cost_usd": 0.25},
        {"schema_version": 1, "task_id": TASK, "agent": "demo-broken",
         "patch": (mig / "broken" / "stays_on_cpu.patch").read_text(), "claimed_success": True,
         "agent_cost_usd": 0.5},
    ]
    (root / "my preds.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (root / "meta.yaml").write_text(
        "organisation: Demo Lab\nmodel: none\nagents:\n  - agent: demo-gold\n  - agent: demo-broken\n"
    )


def test_bundle_round_trip_submit_verify_ranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    write_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)  # relative paths, one with a space, as a user would type them
    assert main(["submit", "--predictions", "my preds.jsonl", "--metadata", "meta.yaml",
                 "--out", "out/bundle.tar.gz"]) == 0
    assert "packed 2 predictions" in capsys.readouterr().out
    assert main(["leaderboard", "verify", "out/bundle.tar.gz", "--db", "lb.duckdb", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "submitted 2 evaluations (verified)" in out and str(tmp_path) not in out.replace(
        str(tmp_path / "lb.duckdb"), "")
    con = open_read_only(tmp_path / "lb.duckdb")
    ranked = {r["agent"]: r for r in run_view(con, "agents").records()}
    assert ranked["demo-gold"]["migrated_rate"] == 1.0 and ranked["demo-gold"]["rank"] == 1
    assert ranked["demo-broken"]["migrated_rate"] == 0.0
    rows = con.execute(
        "SELECT agent, trust, migrated, category, agent_cost_usd FROM evaluations ORDER BY agent"
    ).fetchall()
    assert rows == [("demo-broken", "verified", False, "wrong_device", 0.5),
                    ("demo-gold", "verified", True, None, 0.25)]
    assert con.execute("SELECT count(*) FROM reference_files").fetchall()[0][0] >= 3
    con.close()
    assert main(["leaderboard", "site", "--to", "site", "--db", "lb.duckdb"]) == 0
    assert "demo-gold" in (tmp_path / "site" / "index.html").read_text()


def test_pack_refuses_an_agent_without_metadata(tmp_path: Path) -> None:
    write_inputs(tmp_path)
    (tmp_path / "meta.yaml").write_text("organisation: x\nmodel: none\nagent: demo-gold\n")
    with pytest.raises(SubmissionRefused, match="demo-broken"):
        pack(tmp_path / "my preds.jsonl", tmp_path / "meta.yaml", tmp_path / "b.tar.gz")


def _bundle_with(tmp_path: Path, name: str, data: bytes, kind: bytes = tarfile.REGTYPE) -> Path:
    write_inputs(tmp_path)
    good = tmp_path / "good.tar.gz"
    pack(tmp_path / "my preds.jsonl", tmp_path / "meta.yaml", good)
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(good) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            dst.addfile(m, src.extractfile(m) if m.isfile() else None)
        info = tarfile.TarInfo(name)
        info.type = kind
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        if kind == tarfile.SYMTYPE:
            info.linkname = "/etc/passwd"
        dst.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return bad


@pytest.mark.parametrize(
    ("name", "kind", "message"),
    [("../escape.txt", tarfile.REGTYPE, "escapes"), ("link", tarfile.SYMTYPE, "link"),
     ("extra.txt", tarfile.REGTYPE, "disagree")],
)
def test_unpack_refuses_unsafe_or_unlisted_members(tmp_path: Path, name: str, kind: bytes,
                                                   message: str) -> None:
    bad = _bundle_with(tmp_path, name, b"x", kind)
    with pytest.raises(SubmissionRefused, match=message):
        unpack(bad, tmp_path / "dest")
    assert not (tmp_path / "escape.txt").exists()


def test_unpack_refuses_an_edited_member(tmp_path: Path) -> None:
    write_inputs(tmp_path)
    good = tmp_path / "good.tar.gz"
    pack(tmp_path / "my preds.jsonl", tmp_path / "meta.yaml", good)
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(good) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else b""
            if m.name == "predictions.jsonl":
                data = data.replace(b"demo-broken", b"demo-brokeN")
                assert b"demo-brokeN" in data
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data) if m.isfile() else None)
    with pytest.raises(SubmissionRefused, match="differs from its manifest"):
        unpack(bad, tmp_path / "dest")
