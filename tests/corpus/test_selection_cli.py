"""`gpu2tpu corpus select` on small record/curation folders: each line type appears exactly when
the rule computes it (drop, restore, read, log, tier3, task, summary), and the exit status is 0
only at a fixed point with agreeing logs (issue 25)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from gpu2tpu.cli import main

WAS = "selection rule (corpus/selection.py): owner keeps its first 2; was a record"
KINDS = ("drop", "restore", "read", "log", "tier3", "task")


def _rec(repo: str, lines: int, *, domain: str = "vision", tier: int = 2) -> dict:
    return {"schema_version": 1, "id": repo.replace("/", "__"), "repo": repo, "split": "main",
            "curated": {"domain": domain},
            "scan": {"size": {"python_lines": lines}, "tier": tier,
                     "cuda_only": {"hard": ["xformers"] if tier == 3 else []}}}


def _scan(repo: str, lines: int, *, domain: str = "vision", hard: str = "") -> list[str]:
    return [repo, "0" * 40, domain, str(lines), hard, "MIT"]


def _tree(root: Path, records: list[dict], log: list[tuple[str, str, str, str]],
          scans: list[list[str]] = (), **rules: object) -> list[str]:
    """A projects/ and curation/ folder; returns the `corpus select` argv for them."""
    projects, curation = root / "projects", root / "curation"
    projects.mkdir(parents=True)
    curation.mkdir()
    for rec in records:
        (projects / f"{rec['id']}.yaml").write_text(yaml.safe_dump(rec, sort_keys=False))
    rows = ["repo\tdecision\treason\tdetail", *("\t".join(r) for r in log)]
    (curation / "considered-B.tsv").write_text("\n".join(rows) + "\n")
    cols = "repo\tcommit\tdomain\tpython_lines\thard_cuda_deps\tlicence"
    (curation / "candidate-scans.tsv").write_text(
        "\n".join([cols, *("\t".join(s) for s in scans)]) + "\n")
    params = {"target_count": 4, "owner_cap": 2, "domain_cap_share": 1.0, "tier3_min": 0,
              "tasks": [], **rules}
    (curation / "selection.yaml").write_text(yaml.safe_dump(params))
    return ["corpus", "select", "--projects-dir", str(projects), "--curation-dir", str(curation)]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out.splitlines(), got.err


def _kinds(lines: list[str]) -> Counter[str]:
    return Counter(line.split("\t")[0] for line in lines[1:-1])


def _only(lines: list[str], kind: str) -> list[list[str]]:
    return [line.split("\t") for line in lines if line.startswith(kind + "\t")]


# four records by three owners, all within the caps, all logged `ok`
BASE = [_rec("a/x", 100), _rec("a/y", 200), _rec("b/x", 300, tier=3), _rec("c/x", 400)]
BASE_LOG = [(r["repo"], "included", "ok", "d") for r in BASE]


def test_a_fixed_point_prints_only_the_rule_and_the_summary_and_exits_0(tmp_path, capsys):
    argv = _tree(tmp_path, BASE, BASE_LOG, tier3_min=1, tasks=["c/x"])
    rc, lines, err = _run(argv, capsys)
    assert rc == 0 and err == ""
    assert lines[0] == ("rule selects 4 of 4 eligible (target 4, owner cap 2, domain cap 4, "
                        "tier3_min 1)")
    assert _kinds(lines) == Counter()  # no drop, restore, read, log, tier3 or task line
    assert lines[-1] == ("summary\t4 selected (target 4), 1 tier-3 (tier3_min 1), records to add "
                         "0, remove 0, read 0: a fixed point, the logs agree")


def test_a_passed_candidate_selected_but_not_a_record_is_restored_and_its_log_row_flagged(
        tmp_path, capsys):
    # a/y was a record the rule dropped; its log row says owner_cap, but a/z (which displaced it)
    # failed its read, so the rule selects a/y again
    records = [r for r in BASE if r["repo"] != "a/y"]
    log = [*(row for row in BASE_LOG if row[0] != "a/y"),
           ("a/y", "excluded", "owner_cap", WAS), ("a/z", "excluded", "no_training_entry", "d")]
    argv = _tree(tmp_path, records, log, scans=[_scan("a/y", 200), _scan("a/z", 50)])
    rc, lines, err = _run(argv, capsys)
    assert rc == 1 and _kinds(lines) == Counter({"restore": 1, "log": 1})
    assert _only(lines, "restore")[0][:4] == ["restore", "a/y", "vision", "200 lines"]
    assert "restore its record and log it `ok`" in _only(lines, "restore")[0][4]
    assert _only(lines, "log") == [["log", "considered-B.tsv:5: a/y is logged `owner_cap` but the "
                                    "rule selects it: restore its record and log it `ok`"]]
    assert lines[-1].startswith("summary\t4 selected (target 4), 1 tier-3 (tier3_min 0), "
                                "records to add 1, remove 0, read 0: not a fixed point: ")
    assert "1 to restore, 1 log row(s) to fix" in lines[-1] and "1 to restore" in err


def test_a_record_over_the_owner_cap_is_dropped_and_a_wrong_logged_reason_is_flagged(
        tmp_path, capsys):
    records = [*BASE, _rec("a/big", 900)]
    log = [*BASE_LOG, ("a/big", "excluded", "quota_full", "d")]
    rc, lines, err = _run(_tree(tmp_path, records, log, target_count=5), capsys)
    assert rc == 1 and _kinds(lines) == Counter({"drop": 1, "log": 1})
    drop = _only(lines, "drop")[0]
    assert drop[1] == "a/big" and drop[2].startswith("owner_cap: a keeps 2 passed candidates")
    assert "a/x, a/y" in drop[2] and drop[3].startswith("remove its record and log it `excluded "
                                                        "owner_cap`")
    assert _only(lines, "log")[0][1] == ("considered-B.tsv:6: a/big is logged `quota_full` but the "
                                         "rule drops it for `owner_cap`: correct the reason")
    assert "records to add 0, remove 1, read 0" in lines[-1] and "1 record(s) to drop" in err


def test_a_dropped_candidate_that_is_not_a_record_is_shown_but_is_a_fixed_point(tmp_path, capsys):
    log = [*BASE_LOG, ("a/big", "excluded", "owner_cap", WAS)]
    rc, lines, err = _run(_tree(tmp_path, BASE, log, scans=[_scan("a/big", 900)]), capsys)
    assert rc == 0 and err == "" and _kinds(lines) == Counter({"drop": 1})
    assert _only(lines, "drop")[0][3] == "not a record: nothing to do"
    assert lines[-1].endswith("remove 0, read 0: a fixed point, the logs agree")


def test_unread_candidates_are_read_whether_they_fill_a_slot_or_may_displace(tmp_path, capsys):
    log = [*BASE_LOG, ("d/new", "excluded", "quota_full", "d"),
           ("a/small", "excluded", "owner_cap", "d")]
    argv = _tree(tmp_path, BASE, log, scans=[_scan("d/new", 50, domain="rl"),
                                             _scan("a/small", 10)], target_count=5)
    rc, lines, _ = _run(argv, capsys)
    assert rc == 1 and _kinds(lines) == Counter({"read": 2, "log": 1})
    reads = {r[1]: r for r in _only(lines, "read")}
    assert reads["d/new"][2:4] == ["rl", "50 lines"]
    assert reads["d/new"][4].startswith("selected for a free slot; read it next")
    assert reads["a/small"][4].startswith("ranks within a's first 2: it displaces one only if")
    # d/new is logged quota_full but now fills the free slot: read it and log the outcome
    assert _only(lines, "log")[0][1].endswith("but the rule selects it: read it next and log the "
                                              "outcome")
    assert "records to add 0, remove 0, read 2" in lines[-1]


def test_a_tier_3_shortfall_gets_its_own_line(tmp_path, capsys):
    rc, lines, err = _run(_tree(tmp_path, BASE, BASE_LOG, tier3_min=3), capsys)
    assert rc == 1 and _kinds(lines) == Counter({"tier3": 1})
    assert _only(lines, "tier3")[0][1].startswith("2 short: 1 tier-3 selected, tier3_min 3;")
    assert "1 tier-3 (tier3_min 3)" in lines[-1] and "2 tier-3 short" in err


def test_a_task_that_is_not_eligible_gets_its_own_line(tmp_path, capsys):
    rc, lines, _ = _run(_tree(tmp_path, BASE, BASE_LOG, tasks=["z/task"]), capsys)
    assert rc == 1 and _kinds(lines) == Counter({"task": 1})
    assert _only(lines, "task")[0][1] == "z/task"
    assert "1 task(s) not selected" in lines[-1]


def test_a_record_that_does_not_parse_is_an_input_error(tmp_path, capsys):
    argv = _tree(tmp_path, BASE, BASE_LOG)
    (tmp_path / "projects" / "broken.yaml").write_text("repo: [\n")
    rc, lines, err = _run(argv, capsys)
    assert rc == 2 and lines == []
    assert "broken.yaml" in err and "gpu2tpu corpus check" in err


def test_the_installed_command_explains_every_line_type_and_exits_by_state(tmp_path):
    cmd = [sys.executable, "-m", "gpu2tpu"]
    helped = subprocess.run([*cmd, "corpus", "select", "--help"], capture_output=True, text=True,
                            check=True).stdout
    for kind in (*KINDS, "summary", "rule selects", "exit status: 0"):
        assert kind in helped
    ok = subprocess.run([*cmd, *_tree(tmp_path / "ok", BASE, BASE_LOG)], capture_output=True,
                        text=True)
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1].startswith("summary\t")
    short = _tree(tmp_path / "short", BASE, BASE_LOG, tier3_min=2)
    bad = subprocess.run([*cmd, *short], capture_output=True, text=True)
    assert bad.returncode == 1 and "not a fixed point: 1 tier-3 short" in bad.stderr


def test_the_shipped_corpus_is_reported_as_a_fixed_point(capsys):
    rc, lines, err = _run(["corpus", "select"], capsys)
    assert rc == 0 and err == ""
    assert lines[0].startswith("rule selects 148 of ")
    # only passed candidates that are not records are dropped (shown, nothing to do)
    assert set(_kinds(lines)) <= {"drop"}
    assert all(d[3] == "not a record: nothing to do" for d in _only(lines, "drop"))
    assert lines[-1].endswith("records to add 0, remove 0, read 0: a fixed point, the logs agree")
