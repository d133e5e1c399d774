"""Candidate scans (`corpus select --scan-candidates`): a rescan from the snapshots on this
machine replaces those candidates' rows and keeps every other row on file, so a partial set of
snapshots never makes a candidate ineligible; the shipped scans cover every former record the
rule drops (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from corpus_helpers import TIER0, bare_mirror, commit_files, record, write_considered, write_record

from gpu2tpu.cli import main
from gpu2tpu.corpus import selection
from gpu2tpu.corpus.records import CURATION_DIR, load_considered, load_records

COLS = "\t".join(selection.SCAN_COLUMNS)
OLD_ROW = "o/old\t" + "1" * 40 + "\trl\t321\t\tGPL-3.0"


def _row(repo: str, commit: str = "0" * 40) -> dict[str, str]:
    return {"repo": repo, "commit": commit, "domain": "rl", "python_lines": "5",
            "hard_cuda_deps": "", "licence": "MIT"}


def test_merge_replaces_rescanned_rows_by_repo_and_keeps_the_rest_sorted():
    on_file = [_row("Z/kept"), _row("a/Redone"), _row("m/kept")]
    rescanned = [["a/redone", "2" * 40, "audio", "9", "", "MIT"],
                 ["b/new", "3" * 40, "nlp", "7", "xformers", "MIT"]]
    rows, kept = selection.merge_candidate_scans(on_file, rescanned)
    assert [r[0] for r in rows] == ["a/redone", "b/new", "m/kept", "Z/kept"]
    assert rows[0][1] == "2" * 40  # the rescan wins over the row on file, whatever the case
    assert rows[2] == ["m/kept", "0" * 40, "rl", "5", "", "MIT"] and kept == ["m/kept", "Z/kept"]


@pytest.fixture
def tree(tmp_path: Path) -> tuple[list[str], Path, str]:
    """Records, logs, scans on file and snapshots for `corpus select --scan-candidates`: o/snap
    (snapshot, stale row), o/old (row, no snapshot), o/none (neither), o/bad (snapshot, failed
    its read); returns the argv, the curation folder and o/snap's commit."""
    projects, curation, root = tmp_path / "projects", tmp_path / "curation", tmp_path / "mirrors"
    sha = commit_files(tmp_path / "work", TIER0)
    for repo in ("o/snap", "o/bad", "p/rec"):
        bare_mirror(tmp_path / "work", root, repo)
    write_record(projects, record("p/rec", sha))
    write_considered(curation, [
        ("p/rec", "included", "ok", "d"),
        ("o/snap", "excluded", "owner_cap", "rule; was a record"),
        ("o/old", "excluded", "quota_full", "d"), ("o/none", "excluded", "quota_full", "d"),
        ("o/bad", "excluded", "no_paper", "d")])
    (curation / "candidate-scans.tsv").write_text(
        f"{COLS}\no/snap\t{'0' * 40}\tother\t7\t\tMIT\n{OLD_ROW}\n")
    (curation / "selection.yaml").write_text(yaml.safe_dump(
        {"target_count": 4, "owner_cap": 4, "domain_cap_share": 1.0, "tier3_min": 0, "tasks": []}))
    guesses = tmp_path / "candidates.tsv"
    guesses.write_text("repo\tdomain_guess\no/snap\tspeech-antispoofing\no/old\tvision\n")
    argv = ["corpus", "select", "--projects-dir", str(projects), "--curation-dir", str(curation),
            "--scan-candidates", str(guesses), "--mirror-root", str(root)]
    return argv, curation, sha


def test_a_rescan_keeps_the_rows_of_candidates_without_a_snapshot(tree, capsys):
    argv, curation, sha = tree
    main(argv)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"wrote {curation / 'candidate-scans.tsv'} (1 rescanned from ")
    assert "1 kept from the file without a snapshot; 1 with neither a snapshot nor a row: " \
           "o/none; fetch those, then run again)" in out[0]
    lines = (curation / "candidate-scans.tsv").read_text().splitlines()
    rows = {ln.split("\t")[0]: ln.split("\t") for ln in lines[1:]}
    assert lines[0] == COLS and sorted(rows) == ["o/old", "o/snap"]  # o/bad failed: not scanned
    assert rows["o/snap"][:3] == ["o/snap", sha, "audio"] and rows["o/snap"][5] == "MIT"
    assert rows["o/snap"][3] == str(TIER0["train.py"].count("\n"))  # rescanned, not the stale 7
    assert "\t".join(rows["o/old"]) == OLD_ROW  # no snapshot here: its row stays as it was
    # both stay eligible: the former record as passed, the unread one as unread
    considered, _ = load_considered(curation)
    cands = {c.repo: c for c in selection.eligible([], considered,
                                                   selection.load_candidate_scans(curation), set())}
    assert sorted(cands) == ["o/old", "o/snap"]
    assert cands["o/snap"].passed_read and not cands["o/old"].passed_read


def test_a_second_rescan_writes_the_same_bytes(tree, capsys):
    argv, curation, _ = tree
    main(argv)
    first = (curation / "candidate-scans.tsv").read_bytes()
    main(argv)
    capsys.readouterr()
    assert (curation / "candidate-scans.tsv").read_bytes() == first


def test_every_former_record_the_rule_drops_has_a_scan_and_stays_eligible():
    considered, problems = load_considered(CURATION_DIR)
    assert problems == []
    records = [r.data for r in load_records() if r.data is not None]
    repos = {str(r["repo"]) for r in records}
    former = {r.repo for r in considered if selection.WAS_RECORD.search(r.detail)} - repos
    scans = selection.load_candidate_scans(CURATION_DIR)
    rules = selection.load_rules(CURATION_DIR)
    cands = {c.repo: c for c in selection.eligible(records, considered, scans, set(rules["tasks"]))}
    # the eleven the December rebalance dropped and the two the issue-25 selection dropped
    assert len(former) == 11 and former <= set(cands)
    assert all(cands[r].passed_read for r in former)
    dropped = {c.repo: why for c, why in selection.select(list(cands.values()), rules).dropped}
    assert set(dropped) == former
    for repo in ("NVlabs/stylegan3", "locuslab/deq-flow", "NVlabs/neuralangelo"):
        assert dropped[repo].startswith("quota_full: the target 148 is reached")
    assert {"clovaai/aasist", "rosinality/stylegan2-pytorch"} <= repos


def test_a_record_and_its_scan_row_name_the_same_commit():
    commits = {str(r.data["repo"]): r.data["commit"] for r in load_records() if r.data is not None}
    rows = [r for r in selection.load_candidate_scans(CURATION_DIR) if r["repo"] in commits]
    assert {"clovaai/aasist", "rosinality/stylegan2-pytorch"} <= {r["repo"] for r in rows}
    assert [r["repo"] for r in rows if r["commit"] != commits[r["repo"]]] == []


def test_every_candidate_excluded_only_by_the_rule_has_a_scan_row():
    # without a row a candidate is invisible to the rule: the fixed point would hold over a subset
    considered, _ = load_considered(CURATION_DIR)
    reasons: dict[str, set[str]] = {}
    for row in considered:
        reasons.setdefault(row.repo.lower(), set()).add(
            row.reason if row.decision == "excluded" else "ok")
    by_rule = {repo for repo, why in reasons.items() if why <= selection.RULE_REASONS}
    scanned = {r["repo"].lower() for r in selection.load_candidate_scans(CURATION_DIR)}
    assert len(by_rule) == 157 and sorted(by_rule - scanned) == []
