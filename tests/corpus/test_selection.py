"""The selection rule: owner cap with a stated preference, replacement, fill, fixed point."""

from __future__ import annotations

from gpu2tpu.corpus import selection
from gpu2tpu.corpus.records import CURATION_DIR, Considered, load_considered, load_records
from gpu2tpu.corpus.selection import Candidate


def _c(repo, lines, *, record=True, hard=False, permissive=True, task=False, domain="vision"):
    return Candidate(repo, domain, lines, hard, permissive, task, record)


RULES = {"owner_cap": 2, "domain_cap_share": 0.5, "target_count": 6, "tasks": []}


def test_owner_keeps_its_best_ranked_and_replaces_dropped_records_with_its_own():
    cands = sorted([_c("o/task", 9000, task=True), _c("o/big", 8000), _c("o/kernel", 100, hard=True),
                    _c("o/small", 300, record=False), _c("p/a", 500), _c("p/b", 600),
                    _c("q/gpl", 50, permissive=False)], key=Candidate.key)
    sel = selection.select(cands, RULES)
    assert [c.repo for c, _ in sel.dropped] == ["o/big", "o/kernel"]
    assert "o/small" in [c.repo for c in sel.to_read]  # replaces one of o's dropped records
    assert [c.repo for c in sel.chosen] == ["o/small", "o/task", "p/a", "p/b", "q/gpl"]


def test_fill_prefers_the_domain_with_fewest_records_and_respects_the_domain_cap():
    cands = sorted([_c("a/x", 10, domain="vision"), _c("b/x", 10, domain="vision"),
                    _c("c/x", 10, domain="vision"),
                    _c("d/new", 900, record=False, domain="audio"),
                    _c("e/new", 5, record=False, domain="vision"),
                    _c("f/new", 800, record=False, domain="rl")], key=Candidate.key)
    sel = selection.select(cands, {**RULES, "owner_cap": 1, "target_count": 5})
    assert [c.repo for c in sel.to_read] == ["d/new", "f/new"]  # vision is full at 50% of 5


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
    assert sel.dropped == [] and sel.to_read == []
    assert {c.repo for c in sel.chosen} == {r["repo"] for r in records}
    assert set(rules["tasks"]) <= {r["repo"] for r in records}


def test_select_command_reports_the_fixed_point(capsys):
    from gpu2tpu.cli import main

    assert main(["corpus", "select"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rule selects 148 of ") and "\ndrop\t" not in out and "\nread\t" not in out
