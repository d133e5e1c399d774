"""The selection rule: owner cap with a stated preference, replacement, fill, fixed point."""

from __future__ import annotations

from gpu2tpu.corpus import selection
from gpu2tpu.corpus.records import CURATION_DIR, Considered, load_considered, load_records
from gpu2tpu.corpus.selection import Candidate


def _c(repo, lines, *, record=True, hard=False, permissive=True, task=False, domain="vision"):
    return Candidate(repo, domain, lines, hard, permissive, task, record)


RULES = {"owner_cap": 2, "domain_cap_share": 0.5, "target_count": 6, "tasks": []}


def test_owner_keeps_its_best_ranked_passed_candidates_and_reads_before_displacing():
    cands = [_c("o/task", 9000, task=True), _c("o/big", 8000), _c("o/kernel", 100, hard=True),
             _c("o/small", 300, record=False), _c("p/a", 500), _c("p/b", 600),
             _c("q/gpl", 50, permissive=False)]
    sel = selection.select(cands, {**RULES, "domain_cap_share": 1.0})
    # tier-neutral key: the tier-3 record with fewer lines ranks above o/small and o/big
    assert [(c.repo, why.split(":")[0]) for c, why in sel.dropped] == [("o/big", "owner_cap")]
    assert "o/kernel" in sel.dropped[0][1] and "o/task" in sel.dropped[0][1]
    assert sel.to_read == []  # o/small is not within o's first 2: nothing to read
    assert [c.repo for c in sel.chosen] == ["o/kernel", "o/task", "p/a", "p/b", "q/gpl"]


def test_an_unread_candidate_is_read_before_it_displaces_a_passed_record():
    cands = [_c("o/a", 100), _c("o/b", 200), _c("o/new", 50, record=False), _c("p/a", 10)]
    sel = selection.select(cands, RULES)
    assert [c.repo for c in sel.to_read] == ["o/new"]  # read next ...
    assert sel.dropped == [] and {c.repo for c in sel.chosen} == {"o/a", "o/b", "p/a"}  # ... first
    passed = selection.select([*cands[:2], _c("o/new", 50), cands[3]], RULES)  # it passed
    assert [c.repo for c, _ in passed.dropped] == ["o/b"] and passed.to_read == []


def test_fill_prefers_the_domain_with_fewest_records_and_respects_the_domain_cap():
    cands = [_c("a/x", 10, domain="vision"), _c("b/x", 10, domain="vision"),
             _c("c/x", 11, domain="vision"),
             _c("d/new", 900, record=False, domain="audio"),
             _c("e/new", 5, record=False, domain="vision"),
             _c("f/new", 800, record=False, domain="rl")]
    sel = selection.select(cands, {**RULES, "owner_cap": 1, "target_count": 5})
    assert [c.repo for c in sel.to_read] == ["d/new", "f/new"]  # vision is full at 50% of 5
    assert [(c.repo, why.split(":")[0]) for c, why in sel.dropped] == [("c/x", "quota_full")]


def test_only_candidates_excluded_by_selection_rules_are_eligible():
    considered = [Considered("l", 2, "x/ok", "excluded", "owner_cap", "d"),
                  Considered("l", 3, "y/bad", "excluded", "owner_cap", "d"),
                  Considered("l", 4, "y/bad", "excluded", "no_paper", "d")]
    scans = [{"repo": r, "commit": "0" * 40, "domain": "rl", "python_lines": "5",
              "hard_cuda_deps": "", "licence": "MIT"} for r in ("x/ok", "y/bad")]
    got = selection.eligible([], considered, scans, set())
    assert [c.repo for c in got] == ["x/ok"] and got[0].permissive and not got[0].is_record


def test_the_shipped_corpus_is_a_fixed_point_of_the_rule():
    rules = selection.load_rules(CURATION_DIR)
    records = [r.data for r in load_records() if r.data is not None]
    considered, problems = load_considered(CURATION_DIR)
    assert not problems
    sel = selection.select(selection.eligible(records, considered,
                                              selection.load_candidate_scans(CURATION_DIR),
                                              set(rules["tasks"])), rules)
    # the rule drops passed candidates (the scanned former records), but no record, reads none
    assert sel.dropped and not [c.repo for c, _ in sel.dropped if c.is_record]
    assert sel.to_read == [] and sel.restore == []
    assert {c.repo for c in sel.chosen} == {r["repo"] for r in records}
    assert set(rules["tasks"]) <= {r["repo"] for r in records}
    # each dropped candidate is logged with the reason the rule gives it
    logged = {r.repo: r.reason for r in considered if r.decision == "excluded"}
    assert {c.repo: why.split(":")[0] for c, why in sel.dropped} == {
        c.repo: logged[c.repo] for c, _ in sel.dropped}


def test_select_command_reports_the_fixed_point(capsys):
    from gpu2tpu.cli import main

    assert main(["corpus", "select"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rule selects 148 of ") and lines[-1].startswith("summary\t")
    assert all(ln.startswith("drop\t") and ln.endswith("\tnot a record: nothing to do")
               for ln in lines[1:-1])
