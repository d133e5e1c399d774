"""The goal an agent reads is the reported result its recorded command produces (issue 43).

Every record with reported results says which row its train_command produces (or that the
repository reports none for it, or that this is not established) and each row names its
configuration; the problem statement's goal is that row and no other.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpu2tpu.corpus import results
from gpu2tpu.corpus.problem import ProblemError, problem_statement
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record, load_records


def _record(rid: str) -> dict[str, Any]:
    data = load_record(PROJECTS_DIR / f"{rid}.yaml").data
    assert data is not None, rid
    return data


def _goal(rec: dict[str, Any]) -> list[dict[str, str]]:
    return [c for c in problem_statement(rec)["claims"] if c["claim"].startswith("Goal metric")]


RECORDS = [r.data for r in load_records() if r.data is not None]


@pytest.mark.parametrize("rec", [r for r in RECORDS if r["curated"]["reported_results"]],
                         ids=lambda r: str(r["id"]))
def test_the_goal_is_the_row_the_record_marks_as_its_commands(rec: dict[str, Any]) -> None:
    cur = rec["curated"]
    rows = cur["reported_results"]
    assert all(isinstance(r.get("config"), str) and r["config"].strip() for r in rows)
    declared = cur.get(results.COMMAND_RESULT)
    assert isinstance(declared, dict), f"{rec['id']}: rows but no command_result"
    assert results.command_problems(cur) == []
    goal = _goal(rec)
    row = results.command_row(cur)
    if row is None:  # none or unknown: the text says so and names no goal
        assert goal == []
        said = [c for c in problem_statement(rec)["claims"]
                if c["source"] == f"curated.{results.COMMAND_RESULT}"]
        assert len(said) == 1 and declared["config"] in said[0]["claim"]
        assert ("reports no result" if declared["row"] == results.NONE
                else "is not established") in said[0]["claim"]
        return
    assert rows[row]["config"] == declared["config"]  # the command's configuration, not another
    assert [c["source"] for c in goal] == [f"curated.reported_results[{row}]"]
    claim = goal[0]["claim"]
    assert declared["config"] in claim and f"{rows[row]['metric']} {rows[row]['value']}" in claim


@pytest.mark.parametrize("rid,goal", [
    # the audit's three: a distillation pair, RoBERTa-large's RTE, a Kinetics-400 pre-training
    ("HobbitLong__RepDistiller", "top1_accuracy 75.51 on CIFAR-100"),
    ("THUDM__P-tuning-v2", "accuracy 86.6 on SuperGLUE RTE validation"),
    ("MCG-NJU__VideoMAE", "top1_accuracy 80.0 on Kinetics-400"),
    ("CompVis__latent-diffusion", "FID 5.11 on CelebA-HQ"),
])
def test_audited_records_name_their_commands_result(rid: str, goal: str) -> None:
    claims = _goal(_record(rid))
    assert len(claims) == 1 and claims[0]["claim"].endswith(f": {goal}."), claims


def test_a_command_without_a_reported_result_says_so() -> None:
    text = problem_statement(_record("LTH14__mar"))["text"]
    assert "The repository reports no result for this command's configuration (MAR-L default " \
        "setting" in text
    assert "Goal metric" not in text


def test_candidates_of_an_unknown_match_come_first() -> None:
    rec = _record("kakaobrain__fast-autoaugment")
    told = [c["source"] for c in problem_statement(rec)["claims"]
            if c["claim"].startswith("Possibly this command's")]
    assert told == ["curated.reported_results[3]", "curated.reported_results[0]"]


def test_latent_diffusion_runs_a_real_config() -> None:
    command = _record("CompVis__latent-diffusion")["curated"]["train_command"]
    assert "<" not in command and "configs/latent-diffusion/celebahq-ldm-vq-4.yaml" in command


def _cur(**command: Any) -> dict[str, Any]:
    rows = [{"metric": "acc", "value": 1.0, "dataset": "d", "config": "A"},
            {"metric": "acc", "value": 2.0, "dataset": "d", "config": "B"}]
    return {"reported_results": rows,
            results.COMMAND_RESULT: {"config": "B", "row": 1, "why": "README.md:3", **command}}


@pytest.mark.parametrize("change,field,words", [
    ({"row": 0}, "row", "row 0's config is 'A', not the command's 'B'"),
    ({"row": 5}, "row", "5 is not a row"),
    ({"row": True}, "row", "must be a row index"),
    ({"row": "none"}, "row", "is none but row 1 carries the command's config"),
    ({"why": "the README says so"}, "why", "citing file:line"),
    ({"config": " "}, "config", "must name the configuration"),
    ({"candidates": [0]}, "candidates", "only with row: unknown"),
    ({"row": "unknown", "candidates": [7]}, "candidates", "row indices"),
])
def test_an_inconsistent_command_result_is_named(change: dict[str, Any], field: str,
                                                  words: str) -> None:
    found = results.command_problems(_cur(**change))
    assert any(f == f"curated.command_result.{field}" and words in w for f, w in found), found


def test_rows_need_a_declared_command_result() -> None:
    cur = _cur()
    assert results.command_problems(cur) == []
    del cur[results.COMMAND_RESULT]
    assert results.command_problems(cur)[0][0] == "curated.command_result"
    rec = copy.deepcopy(_record("HobbitLong__RepDistiller"))
    del rec["curated"][results.COMMAND_RESULT]
    with pytest.raises(ProblemError, match="curated.command_result must say which reported "
                                           "result the train_command produces"):
        problem_statement(rec)
    assert results.command_problems({"reported_results": []}) == []  # nothing reported


def test_a_row_without_its_configuration_is_refused() -> None:
    bare = [{"metric": "acc", "value": 1.0, "dataset": "d"}]
    assert results.row_problems(bare)[0][0] == "curated.reported_results[0]"
    assert "config names the configuration" in results.row_problems(bare)[0][1]
