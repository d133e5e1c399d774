"""`corpus check` refuses each kind of malformed record, naming the file and the field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from corpus_helpers import TIER0, TIER3, commit_files, record, write_considered, write_record

from gpu2tpu.cli import main
from gpu2tpu.corpus.check import run_check
from gpu2tpu.corpus.scanner import scan_path


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> list[dict[str, Any]]:
    """Two records scanned for real from git repositories (made once per module)."""
    root = tmp_path_factory.mktemp("repos")
    out = []
    for repo, files in (("alice/easy", TIER0), ("bob/hard", TIER3)):
        work = root / repo.replace("/", "_")
        rec = record(repo, commit_files(work, files))
        rec["scan"] = scan_path(work, repo=repo)
        out.append(rec)
    return out


@pytest.fixture
def corpus(tmp_path: Path, scanned) -> dict[str, Any]:
    """A valid two-record corpus with its considered log, fresh for each test."""
    projects, curation = tmp_path / "projects", tmp_path / "curation"
    paths = {rec["repo"]: write_record(projects, copy.deepcopy(rec)) for rec in scanned}
    write_considered(curation, [("alice/easy", "included", "ok", "MIT"),
                                ("bob/hard", "included", "ok", "MIT; apex"),
                                ("carol/none", "excluded", "no_licence", "licence: none found")])
    return {"projects": projects, "curation": curation, "paths": paths}


def _edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _problems(corpus, **kw) -> list[str]:
    problems, _ = run_check(corpus["projects"], corpus["curation"], **kw)
    return problems


def test_valid_corpus_passes(corpus, capsys):
    assert _problems(corpus) == []
    argv = ["corpus", "check", str(corpus["projects"]), "--curation-dir", str(corpus["curation"])]
    assert main(argv) == 0
    assert "ok: 2 record(s)" in capsys.readouterr().out


def _set(path: str, value: Any):
    def change(d: dict) -> None:
        *head, last = path.split(".")
        for key in head:
            d = d[key]
        if value is _DELETE:
            del d[last]
        else:
            d[last] = value
    return change


_DELETE = object()

CASES = [
    ("commit", _set("commit", "abc123"), "commit"),
    ("commit upper", _set("commit", "A" * 40), "commit"),
    ("scan missing", _set("scan", _DELETE), "scan"),
    ("scan other commit", _set("scan.commit", "b" * 40), "scan.commit"),
    ("licence missing", _set("scan.licence.spdx", None), "scan.licence"),
    ("paper_url", _set("curated.paper_url", "arxiv.org/abs/1"), "curated.paper_url"),
    ("paper_title", _set("curated.paper_title", ""), "curated.paper_title"),
    ("paper_year", _set("curated.paper_year", "2021"), "curated.paper_year"),
    ("paper_year not arXiv's", _set("curated.paper_year", 2022), "curated.paper_year"),
    ("domain", _set("curated.domain", "robotics"), "curated.domain"),
    ("split", _set("split", "test"), "split"),
    ("tier", _set("scan.tier", 0), "scan.tier"),
    ("score", _set("scan.score", 3), "scan.score"),
    ("bucket", _set("scan.bucket", "easy"), "scan.bucket"),
    ("tier absent", _set("scan.tier", _DELETE), "scan.tier"),
    ("result value", _set("curated.reported_results", [{"metric": "acc", "value": "76%",
                                                         "dataset": "x", "config": "c"}]),
     "curated.reported_results[0].value"),
    ("result without config", _set("curated.reported_results", [{"metric": "acc", "value": 76,
                                                                  "dataset": "x"}]),
     "curated.reported_results[0]"),
    ("command result missing", _set("curated.command_result", _DELETE), "curated.command_result"),
    ("command result row of another config", _set("curated.command_result.config", "ResNet-50"),
     "curated.command_result.row"),
    ("command result without evidence", _set("curated.command_result.why", "trust me"),
     "curated.command_result.why"),
    ("datasets", _set("curated.datasets", "CIFAR-10"), "curated.datasets"),
    # issue 43: a README's fill-in left in the command (each seen in a recorded command)
    ("command placeholder", _set("curated.train_command", "python main.py --root <directory>"),
     "curated.train_command"),
    ("command env placeholder", _set("curated.train_command", "python train.py ${DATA_DIR}"),
     "curated.train_command"),
    ("command example path", _set("curated.train_command", "python t.py --data /path/to/coco"),
     "curated.train_command"),
    ("command choice list", _set("curated.train_command", "python m.py --model [EDSR|RCAN]"),
     "curated.train_command"),
    ("id", _set("id", "bob__other"), "id"),
    ("schema", _set("schema_version", 2), "schema_version"),
]


@pytest.mark.parametrize("name,change,field", CASES, ids=[c[0] for c in CASES])
def test_malformed_record_is_named(corpus, name, change, field):
    path = corpus["paths"]["bob/hard"]
    _edit(path, change)
    problems = _problems(corpus)
    assert problems, name
    assert any(p.startswith(f"{path}: {field}:") or f"{path.name}: {field}:" in p
               for p in problems), problems


def test_unparsable_yaml(corpus):
    path = corpus["paths"]["alice/easy"]
    path.write_text("repo: [unclosed\n")
    problems = _problems(corpus)
    # the path is shown relative to the working directory where it lies under it
    assert any(f"{path.name}: " in p and "does not parse" in p for p in problems), problems


def test_main_split_needs_permissive_licence(corpus):
    path = corpus["paths"]["alice/easy"]
    _edit(path, _set("scan.licence", {"spdx": "GPL-3.0", "permissive": False, "file": "LICENSE"}))
    assert any(f"{path.name}: split:" in p and "reference_only" in p for p in _problems(corpus))


def test_duplicate_repo_and_owner_cap(corpus, tmp_path):
    data = yaml.safe_load(corpus["paths"]["alice/easy"].read_text())
    dup = corpus["projects"] / "Alice__easy.yaml"
    data.update(id="Alice__easy", repo="Alice/easy")
    data["scan"]["repo"] = "Alice/easy"
    dup.write_text(yaml.safe_dump(data, sort_keys=False))
    assert any("repo: duplicate" in p for p in _problems(corpus))
    dup.unlink()
    base = yaml.safe_load(corpus["paths"]["bob/hard"].read_text())
    for i in range(5):
        data = dict(base, id=f"bob__p{i}", repo=f"bob/p{i}")
        data["scan"] = dict(base["scan"], repo=f"bob/p{i}")
        write_record(corpus["projects"], data)
    problems = _problems(corpus)
    assert any("owner bob has 6 records (cap 4)" in p for p in problems)


def test_considered_log_rules(corpus):
    write_considered(corpus["curation"], [("alice/easy", "included", "ok", "MIT"),
                                          ("dave/x", "excluded", "", "no reason given"),
                                          ("erin/y", "excluded", "not_pytorch", ""),
                                          ("frank/z", "maybe", "ok", "")])
    problems = _problems(corpus)
    hard = corpus["paths"]["bob/hard"].name
    assert any(f"{hard}: repo: not logged" in p for p in problems)
    assert any("considered-A.tsv:3: reason:" in p for p in problems)
    assert any("considered-A.tsv:4: detail:" in p for p in problems)
    assert any("considered-A.tsv:5: decision:" in p for p in problems)


def test_logged_decision_must_match_split(corpus):
    write_considered(corpus["curation"], [("alice/easy", "reference_only", "ok", "GPL"),
                                          ("bob/hard", "included", "ok", "MIT"),
                                          ("gina/w", "included", "ok", "no record")])
    problems = _problems(corpus)
    assert any("alice__easy.yaml: split:" in p for p in problems)
    assert any("considered-A.tsv:4: repo: gina/w is included but has no record" in p
               for p in problems)


def test_expect_count_and_balance(corpus, capsys):
    problems = _problems(corpus, expect_count=148)
    assert "(corpus): count: 2 records, expected 148" in problems
    assert any("vision holds 2/2" in p for p in problems)
    assert any("tier-3 records, need at least 15" in p for p in problems)
    argv = ["corpus", "check", str(corpus["projects"]), "--curation-dir", str(corpus["curation"]),
            "--expect-count", "2"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "count:" not in out and "tier-3 records" in out


def test_an_invalid_audit_file_is_a_check_problem(corpus):
    audits = corpus["curation"] / "audits"
    audits.mkdir()
    rec = yaml.safe_load(corpus["paths"]["alice/easy"].read_text())
    (audits / f"{rec['id']}.yaml").write_text(yaml.safe_dump({
        "record": rec["id"], "commit": rec["commit"], "reader": "second read",
        "claims": [{"field": "curated.paper_year", "outcome": "maybe", "evidence": "README.md:1"}]}))
    problems = _problems(corpus)
    assert any("maybe" in p for p in problems), problems


def test_an_audit_correction_the_record_does_not_hold_is_a_check_problem(corpus):
    """The seventh read's fixer saw `corpus check` print ok while an audit read corrected-pending."""
    audits = corpus["curation"] / "audits"
    audits.mkdir()
    rec = yaml.safe_load(corpus["paths"]["alice/easy"].read_text())
    claim = {"field": "scan.tier", "outcome": "corrected", "evidence": "train.py:1",
             "correction": rec["scan"]["tier"] + 1, "why": "a reader's other tier"}
    path = audits / f"{rec['id']}.yaml"
    path.write_text(yaml.safe_dump({"record": rec["id"], "commit": rec["commit"],
                                    "reader": "second read", "claims": [claim]}))
    assert [p for p in _problems(corpus) if "scan.tier" in p] == [
        f"audits/{rec['id']}.yaml: scan.tier: the audit's standing correction is not what the record "
        "holds (fix the record, or append a later claim that supersedes it)"]
    later = {"field": "scan.tier", "outcome": "ok", "evidence": "train.py:1 read again"}
    path.write_text(yaml.safe_dump({"record": rec["id"], "commit": rec["commit"],
                                    "reader": "second read", "claims": [claim, later]}))
    assert not [p for p in _problems(corpus) if "scan.tier" in p]


def test_shipped_records_need_every_dataset_in_the_catalog(corpus, monkeypatch):
    import gpu2tpu.corpus.check as check

    _edit(corpus["paths"]["alice/easy"], lambda d: d["curated"].update(datasets=["No Such Set 9"]))
    assert not any("No Such Set 9" in p for p in _problems(corpus))  # not the shipped records
    monkeypatch.setattr(check, "PROJECTS_DIR", corpus["projects"])
    assert any("curated.datasets" in p and "No Such Set 9" in p and "datasets.yaml" in p
               for p in _problems(corpus))


def test_a_record_without_a_command_has_no_problem_statement(corpus):
    _edit(corpus["paths"]["bob/hard"], lambda d: d["curated"].pop("train_command"))
    assert any("problem statement" in p and "train_command" in p for p in _problems(corpus))
