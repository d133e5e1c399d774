"""A damaged store is refused, never queried (issue 42): cut to half its size, cut at a block
boundary, or with a block DuckDB's checksum rejects, every command says so in one line that names
the file and what to do, prints no result and writes nothing; `export` and `site` leave an
earlier output as it was (or none), never half of one."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import lb_runfactory as rf
import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.ingest import submit
from gpu2tpu.leaderboard.store import HEADER_BYTES

pytestmark = pytest.mark.usefixtures("fake_regrader")
READERS = [["agents"], ["tasks"], ["failures"], ["costs"], ["calibration"],
           ["sql", "SELECT count(*) FROM evaluations"]]


@pytest.fixture(scope="module")
def good_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four agents' runs, as the README demo leaves them (built once, copied per test)."""
    root = tmp_path_factory.mktemp("store")
    db = root / "lb.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        from gpu2tpu.leaderboard import ingest
        from gpu2tpu.tasks import finder

        mp.setattr(ingest, "regrade_graded", rf.fake_regrade)
        mp.setattr(finder, "installed_specs", list)  # the tasks table: the runs' own task ids
        for agent in ("gold", "broken-a", "broken-b", "broken-c"):
            run = rf.write_run(root / "runs", [rf.Eval("cifar_amp"), rf.Eval("mnist", backend="cpu")],
                               agent=agent, run_id=f"run-{agent}")
            submit(run, rf.write_metadata(root / f"{agent}.yaml", agent=agent), db, trust="verified")
    return db


def _copy(good: Path, tmp_path: Path) -> Path:
    db = tmp_path / "damaged store.duckdb"
    shutil.copyfile(good, db)
    return db


def _block_of(db: Path, table: str) -> tuple[int, int]:
    """(first block id of `table`'s data, block size)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        block = con.execute(f"SELECT min(block_id) FROM pragma_storage_info('{table}') "
                            "WHERE block_id >= 0").fetchall()[0][0]
        size = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]
    finally:
        con.close()
    return int(block), int(size)


def _cut(db: Path, size: int) -> None:
    with db.open("r+b") as f:
        f.truncate(size)


def _flip(db: Path, table: str) -> None:
    """Overwrite bytes inside a block of `table`: DuckDB's checksum rejects it when read."""
    block, size = _block_of(db, table)
    with db.open("r+b") as f:
        f.seek(HEADER_BYTES + block * size + 64)
        f.write(b"\xff" * 16)


def _one_line(capsys: pytest.CaptureFixture[str], db: Path) -> str:
    out, err = capsys.readouterr()
    assert out == "", out
    (line,) = err.splitlines()
    assert line.startswith("gpu2tpu: error: ") and f"the leaderboard store {db} is damaged (" in line
    assert "restore it from a backup, or rebuild it from the run directories" in line, line
    return line


def test_a_store_cut_to_half_is_refused_by_every_command(good_store: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    db = _copy(good_store, tmp_path)
    _cut(db, db.stat().st_size // 2)
    for argv in READERS:
        assert main(["leaderboard", *argv, "--db", str(db)]) == 2, argv
        assert "cut short" in _one_line(capsys, db)
    for argv in (["export", "--to", str(tmp_path / "export")], ["site", "--to", str(tmp_path / "site")],
                 ["migrate"]):
        assert main(["leaderboard", *argv, "--db", str(db)]) == 2, argv
        _one_line(capsys, db)
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp")], agent="new")
    size = db.stat().st_size
    assert main(["submit", str(run), "--metadata", str(rf.write_metadata(tmp_path / "m.yaml", agent="new")),
                 "--db", str(db)]) == 2
    assert "submission refused, nothing written: the leaderboard store" in _one_line(capsys, db)
    assert db.stat().st_size == size
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged store.duckdb", "m.yaml", "runs"]


def test_a_cut_at_a_block_boundary_and_an_empty_file_are_refused(
        good_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _copy(good_store, tmp_path)
    block, size = _block_of(db, "evaluations")
    _cut(db, HEADER_BYTES + block * size)  # whole blocks, but not the ones the tables use
    assert main(["leaderboard", "agents", "--db", str(db)]) == 2
    assert "its tables use block" in _one_line(capsys, db)
    _cut(db, 0)
    assert main(["leaderboard", "agents", "--db", str(db)]) == 2
    assert "the file is empty" in _one_line(capsys, db)


def test_a_block_that_fails_its_checksum_is_one_line_and_no_output(
        good_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _copy(good_store, tmp_path)
    _flip(db, "agent_task_stats")  # what the agents view reads
    assert main(["leaderboard", "agents", "--db", str(db)]) == 2
    assert "checksum" in _one_line(capsys, db)


@pytest.mark.parametrize("command", ["export", "site"])
def test_a_failed_export_or_site_leaves_the_earlier_output(
        command: str, good_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out dir"
    assert main(["leaderboard", command, "--to", str(out), "--db", str(good_store)]) == 0
    (out / ".git").mkdir()  # e.g. a Hugging Face Space's clone: not ours, never touched
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    db = _copy(good_store, tmp_path)
    _flip(db, "evidence")  # read after the first tables (export) and the views (site) are written
    capsys.readouterr()
    assert main(["leaderboard", command, "--to", str(out), "--db", str(db)]) == 2
    assert "checksum" in _one_line(capsys, db)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged store.duckdb", "out dir"]
    shutil.rmtree(out)
    assert main(["leaderboard", command, "--to", str(out), "--db", str(db)]) == 2
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["damaged store.duckdb"]


def test_a_new_site_replaces_only_its_own_files(good_store: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    runs = str(good_store.parent / "runs")
    assert main(["leaderboard", "site", "--to", str(site), "--db", str(good_store), "--runs", runs]) == 0
    assert (site / "files").is_dir()
    (site / ".git").mkdir()
    (site / "notes.txt").write_text("mine")
    assert main(["leaderboard", "site", "--to", str(site), "--db", str(good_store)]) == 0
    assert not (site / "files").exists()  # links of the earlier page: gone with it
    assert (site / "notes.txt").read_text() == "mine" and (site / ".git").is_dir()
    (tmp_path / "made by mkdir").mkdir()
    assert site.stat().st_mode & 0o777 == (tmp_path / "made by mkdir").stat().st_mode & 0o777
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made by mkdir", "site"]  # no stage left
