"""The forgeries of issue 12, tried on copies of a real practice run: each is refused, or stored as
what it is (self-reported, out of the ranking, every figure derived from the verified files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from gpu2tpu.leaderboard.ingest import SELF_REPORTED, VERIFIED, submit
from gpu2tpu.leaderboard.queries import run_view
from gpu2tpu.leaderboard.runfiles import SubmissionRefused
from gpu2tpu.record.report import KERNEL, SCAN, hash_file


def meta(tmp: Path, *agents: str) -> Path:
    path = tmp / f"meta-{'-'.join(agents)}.yaml"
    entries = "".join(f"  - agent: {a}\n" for a in agents)
    path.write_text(f"model: none\norganisation: test\nagents:\n{entries}")
    return path


@pytest.fixture
def published(real_run_dir: Path, tmp_path: Path) -> Path:
    """A store where the maintainers' own run of gold is verified (publishing its references)."""
    db = tmp_path / "store.duckdb"
    submit(real_run_dir, meta(tmp_path, "gold"), db, trust=VERIFIED)
    return db


def copy_run(real_run_dir: Path, tmp_path: Path) -> Path:
    run = tmp_path / "copy" / real_run_dir.name
    shutil.copytree(real_run_dir, run)
    return run


def rehash(report_path: Path, **changes: object) -> dict:
    """What a dishonest submitter does after editing files: recompute every listed sha256."""
    report = json.loads(report_path.read_text())
    report.update(changes)
    for name in report["files"]:
        base = report_path.parent.parent.parent if name.startswith("references/") else report_path.parent
        report["files"][name] = hash_file(base / name)
    report_path.write_text(json.dumps(report))
    return report


def rows(db: Path, sql: str, **params: object) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def ranked_agents(db: Path) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r["agent"] for r in run_view(con, "agents").records() if r["rank"] is not None}
    finally:
        con.close()


def test_edited_trace_with_rehash_is_self_reported_and_never_ranked(
    real_run_dir: Path, tmp_path: Path, published: Path
) -> None:
    run = copy_run(real_run_dir, tmp_path)
    report_path = run / "broken-clip_changed" / "cifar_amp" / "report.json"
    trace = report_path.parent / "trace.jsonl"
    before = trace.read_text()
    lines = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        for clip in event.get("clip") or []:
            clip["max_norm"] = clip["max_norm"] / 5  # 5 -> 1: the clip the task asks for
        lines.append(json.dumps(event))
    trace.write_text("\n".join(lines) + "\n")
    assert trace.read_text() != before  # the clip really was edited
    rehash(report_path)
    result = submit(run, meta(tmp_path, "broken-clip_changed"), published)
    assert result.inserted == 1 and result.trust == SELF_REPORTED
    (trust,) = rows(published, "SELECT trust FROM evaluations WHERE agent = 'broken-clip_changed'")[0]
    assert trust == SELF_REPORTED
    assert ranked_agents(published) == {"gold"}  # the default ranking holds verified runs only


def test_gold_files_copied_into_broken_evaluation_stay_out_of_the_ranking(
    real_run_dir: Path, tmp_path: Path, published: Path
) -> None:
    run = copy_run(real_run_dir, tmp_path)
    gold = run / "gold" / "cifar_amp"
    broken = run / "broken-item_every_step" / "cifar_amp"
    for name in ("trace.jsonl", "goal.json", "process.json"):
        shutil.copy(gold / name, broken / name)
    gold_verdict = json.loads((gold / "report.json").read_text())["verdict"]
    rehash(broken / "report.json", verdict=gold_verdict)
    submit(run, meta(tmp_path, "broken-item_every_step"), published)
    got = rows(published, "SELECT trust, verdict_changed FROM evaluations WHERE agent = $a",
               a="broken-item_every_step")
    assert got == [(SELF_REPORTED, False)]
    assert "broken-item_every_step" not in ranked_agents(published)


def test_fabricated_references_are_refused_even_unhashed(
    real_run_dir: Path, tmp_path: Path, published: Path
) -> None:
    run = copy_run(real_run_dir, tmp_path)
    report_path = run / "broken-item_every_step" / "cifar_amp" / "report.json"
    report = json.loads(report_path.read_text())
    real_ref = run / report["reference"]["dir"]
    fake = run / "references" / "fabricated"
    shutil.copytree(real_ref, fake)  # the submitter would then edit these to suit the candidate
    report["reference"]["dir"] = "references/fabricated"
    report_path.write_text(json.dumps(report))
    before = rows(published, "SELECT count(*) FROM evaluations")
    with pytest.raises(SubmissionRefused, match="fixed by the reference id"):
        submit(run, meta(tmp_path, "broken-item_every_step"), published)
    # Same id, files edited and rehashed: not the published reference.
    report["reference"]["dir"] = f"references/{report['reference']['id']}"
    report_path.write_text(json.dumps(report))
    goal = real_ref / "seed-0" / "goal.json"
    data = json.loads(goal.read_text())
    data["value"] = 0.0
    goal.write_text(json.dumps(data))
    for other in run.glob("*/*/report.json"):  # every report listing that reference
        rehash(other)
    with pytest.raises(SubmissionRefused, match="differ from the published reference"):
        submit(run, meta(tmp_path, "broken-item_every_step"), published)
    assert rows(published, "SELECT count(*) FROM evaluations") == before


def test_unpublished_references_need_every_file_listed(real_run_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"  # a user's own store: nothing published yet
    submit(real_run_dir, meta(tmp_path, "gold"), db)
    assert rows(db, "SELECT DISTINCT trust, reference_status FROM evaluations") == [
        (SELF_REPORTED, "unpublished")]
    run = copy_run(real_run_dir, tmp_path)
    report_path = run / "broken-item_every_step" / "cifar_amp" / "report.json"
    report = json.loads(report_path.read_text())
    gold_goal = next(k for k in report["files"] if k.endswith("/gold/goal.json"))
    del report["files"][gold_goal]  # then the gold reference's goal could say anything
    report_path.write_text(json.dumps(report))
    with pytest.raises(SubmissionRefused, match="gold/goal.json"):
        submit(run, meta(tmp_path, "broken-item_every_step"), tmp_path / "other.duckdb")


def test_unlisted_goal_file_is_refused(real_run_dir: Path, tmp_path: Path, published: Path) -> None:
    run = copy_run(real_run_dir, tmp_path)
    report_path = run / "broken-item_every_step" / "cifar_amp" / "report.json"
    report = json.loads(report_path.read_text())
    del report["files"]["goal.json"]
    report_path.write_text(json.dumps(report))
    goal = report_path.parent / "goal.json"
    goal.write_text(goal.read_text().replace('"value"', '"value": 0.99, "was"'))
    with pytest.raises(SubmissionRefused, match="does not list goal.json"):
        submit(run, meta(tmp_path, "broken-item_every_step"), published)


def test_a_report_that_drops_its_scan_or_a_kernel_view_is_refused(
    real_run_dir: Path, tmp_path: Path, published: Path
) -> None:
    """The harness that wrote this run keeps scans and kernel views: a report that leaves one out
    of its list is refused, naming the evaluation and the file; one that leaves them all out reads
    as recorded before them, and its references are then not the published ones."""
    run = copy_run(real_run_dir, tmp_path)
    report_path = run / "broken-item_every_step" / "cifar_amp" / "report.json"
    honest = json.loads(report_path.read_text())
    gold_kernel = next(k for k in honest["files"] if k.endswith("/gold/" + KERNEL))
    for dropped in ([SCAN], [KERNEL], [gold_kernel]):
        report = json.loads(json.dumps(honest))
        for name in dropped:
            del report["files"][name]
        report_path.write_text(json.dumps(report))
        with pytest.raises(SubmissionRefused, match=f"evaluation broken-item_every_step/cifar_amp "
                           f"does not list {dropped[0]}"):
            submit(run, meta(tmp_path, "broken-item_every_step"), published)
    report = json.loads(json.dumps(honest))
    for name in [n for n in report["files"] if n == SCAN or n.endswith(KERNEL)]:
        del report["files"][name]
    report_path.write_text(json.dumps(report))
    with pytest.raises(SubmissionRefused, match="lacks published file"):
        submit(run, meta(tmp_path, "broken-item_every_step"), published)


def test_unhashed_report_fields_are_never_stored(
    real_run_dir: Path, tmp_path: Path, published: Path
) -> None:
    run = copy_run(real_run_dir, tmp_path)
    report_path = run / "broken-clip_changed" / "cifar_amp" / "report.json"
    report = json.loads(report_path.read_text())
    honest = dict(report["execution"]), report["candidate"]["goal"]["value"]
    report["prediction"]["agent_cost_usd"] = 0.0
    report["execution"].update(chip_seconds=0.001, step_time_s=1e-6, compile_count=1)
    report["candidate"]["goal"]["value"] = 0.99
    report_path.write_text(json.dumps(report))
    submit(run, meta(tmp_path, "broken-clip_changed"), published)
    got = rows(
        published,
        "SELECT agent_cost_usd, chip_seconds, step_time_s, compile_count, goal_value "
        "FROM evaluations WHERE agent = 'broken-clip_changed'",
    )[0]
    execution, goal = honest
    assert got[0] is None  # a self-reported agent cost cannot be verified: unknown, not $0
    assert got[1:4] == (execution["chip_seconds"], execution["step_time_s"], execution["compile_count"])
    assert got[4] == pytest.approx(goal)
    assert got[4] != 0.99


def test_several_agents_in_one_submission_from_a_relative_spaced_symlinked_path(
    real_run_dir: Path, tmp_path: Path, published: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spaced = tmp_path / "my runs" / "demo run"
    spaced.parent.mkdir()
    shutil.copytree(real_run_dir, spaced)
    link = tmp_path / "linked"
    link.symlink_to(spaced)
    monkeypatch.chdir(tmp_path)
    both = meta(tmp_path, "broken-item_every_step", "broken-clip_changed")
    result = submit(Path("linked"), Path(both.name), published)
    assert len(result.submission_ids) == 2
    stored = rows(published, "SELECT agent, source_path FROM submissions WHERE trust = $t ORDER BY agent",
                  t=SELF_REPORTED)
    assert stored == [("broken-clip_changed", None), ("broken-item_every_step", None)]
    assert str(tmp_path) not in result.message().replace(str(published), "")
