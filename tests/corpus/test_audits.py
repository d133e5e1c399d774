"""Issue 25: second-read audits (`corpus/curation/audits/<id>.yaml`) load, validate against their
record, and give each record its audit status.

The fixture audits real records (copied from corpus/projects) with claims a reader made of their
pinned trees; the last tests read the committed audit files.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu2tpu.corpus import audits, corrections
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record

RID = "clovaai__cutblur"
COMMIT = "2448f8bb42e2705d54f0c273e0952664f4f98754"
COMMAND = ("python main.py --use_moa --model EDSR --dataset DIV2K_SR --div2k_range 1-800/801-810 "
           "--scale 2 --dataset_root data/DIV2K")


def _claims() -> list[dict[str, Any]]:
    return [
        {"field": "commit", "outcome": "ok", "evidence": "git log -1: 2022-08-22T15:11:41+09:00"},
        {"field": "scan.licence.spdx", "outcome": "ok", "evidence": "LICENSE:1 MIT License"},
        {"field": "curated.train_command", "outcome": "corrected",
         "evidence": "README.md:70-76 and option.py:98 (--use_moa sets the augmentations)",
         "correction": COMMAND, "why": "without --use_moa the --augs lists raise IndexError"},
        {"field": "curated.reported_results", "outcome": "unverifiable",
         "evidence": "README.md: tables are images", "why": "the numbers are only in figures"},
    ]


def _audit(**over: Any) -> dict[str, Any]:
    doc = {"record": RID, "commit": COMMIT, "reader": "second read (test)", "claims": _claims()}
    doc.update(over)
    return doc


@pytest.fixture()
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    projects, audit_dir = tmp_path / "projects", tmp_path / "audits"
    projects.mkdir()
    audit_dir.mkdir()
    shutil.copy(PROJECTS_DIR / f"{RID}.yaml", projects / f"{RID}.yaml")
    return audit_dir, projects


def _write(audit_dir: Path, doc: Any, name: str = RID) -> Path:
    path = audit_dir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_good_file_loads_and_its_applied_correction_reads_verified(dirs):
    audit_dir, projects = dirs
    _write(audit_dir, _audit())
    assert audits.audit_problems(audit_dir, projects) == []
    audit = audits.load_audit(RID, audit_dir, projects)
    assert audit is not None and audit.commit == COMMIT
    assert [c.outcome for c in audit.claims] == ["ok", "ok", "corrected", "unverifiable"]
    # four fields checked of the audited ones, one unverifiable: not a verified record
    assert audits.audit_status(RID, audit_dir, projects) == "partly verified"
    assert audits.audit_status("jik876__hifi-gan", audit_dir, projects) == "not audited"
    assert audits.pending_corrections(audit_dir, projects) == []


def test_field_paths_resolve_keys_and_list_items():
    data = load_record(PROJECTS_DIR / "HazyResearch__hyena-dna.yaml").data
    assert corrections.field_steps("scan.cuda_only.evidence[3].status") == [
        "scan", "cuda_only", "evidence", 3, "status"]
    first = corrections.resolve(data, "scan.cuda_only.evidence[0]")
    assert first == data["scan"]["cuda_only"]["evidence"][0]
    assert corrections.resolve(data, "scan.cuda_only.evidence[999]") is corrections.MISSING
    with pytest.raises(ValueError, match="starts with 'scna'"):
        corrections.field_steps("scna.tier")
    with pytest.raises(ValueError, match="not a field path"):
        corrections.field_steps("scan.evidence[x]")


def _claim(**over: Any) -> dict[str, Any]:
    claim: dict[str, Any] = {"field": "scan.tier", "outcome": "ok", "evidence": "difficulty.py"}
    claim.update(over)
    return claim


BAD = [
    ("commit mismatch", _audit(commit="0" * 40), "not the record's pinned commit"),
    ("short commit", _audit(commit="2448f8b"), "must be the 40-hex pinned commit"),
    ("record key", _audit(record="clovaai__cutblurr"), "differs from the file name"),
    ("no reader", _audit(reader=""), "reader: missing"),
    ("no claims", _audit(claims=[]), "non-empty list"),
    ("extra key", _audit(notes="x"), "unknown key(s) notes"),
    ("unknown root", _audit(claims=[_claim(field="scna.tier")]), "claims[0].field"),
    ("does not resolve", _audit(claims=[_claim(field="scan.cuda_only.evidence[0]")]),
     "does not resolve in the record"),
    ("bad outcome", _audit(claims=[_claim(outcome="fixed")]), "claims[0].outcome: must be one of"),
    ("no evidence", _audit(claims=[_claim(evidence=" ")]), "claims[0].evidence: missing"),
    ("corrected without value", _audit(claims=[_claim(outcome="corrected", why="w")]),
     "needs `correction`"),
    ("correction on ok", _audit(claims=[_claim(correction=2)]), "only for outcome corrected"),
    ("why on ok", _audit(claims=[_claim(why="w")]), "claims[0].why: only for outcome"),
    ("unverifiable without why", _audit(claims=[_claim(outcome="unverifiable")]),
     "claims[0].why: outcome unverifiable needs"),
    ("wrong type", _audit(claims=[_claim(outcome="corrected", correction="2", why="w")]),
     "is a string, the field scan.tier holds a number"),
    ("unknown claim key", _audit(claims=[_claim(line=3)]), "unknown key(s) line"),
    ("not a mapping", ["record", RID], "is not a YAML mapping"),
]


@pytest.mark.parametrize("doc,message", [(d, m) for _, d, m in BAD], ids=[n for n, _, _ in BAD])
def test_each_bad_file_is_refused_naming_file_claim_and_fix(dirs, doc, message):
    audit_dir, projects = dirs
    _write(audit_dir, doc)
    problems = audits.audit_problems(audit_dir, projects)
    assert any(message in p for p in problems), problems
    assert all(p.startswith(f"{RID}.yaml: ") for p in problems)
    with pytest.raises(audits.AuditError, match="fix the audit file"):
        audits.audit_status(RID, audit_dir, projects)
    with pytest.raises(audits.AuditError, match=r"fix the audit files"):
        audits.audit_summary(audit_dir, projects)


def test_an_audit_of_a_record_that_does_not_exist_is_refused(dirs):
    audit_dir, projects = dirs
    _write(audit_dir, _audit(record="nobody__nothing"), name="nobody__nothing")
    assert audits.audit_problems(audit_dir, projects) == [
        "nobody__nothing.yaml: no record corpus/projects/nobody__nothing.yaml: audit an existing "
        "record (its id is the file name)"]


def test_status_turns_verified_once_the_correction_is_applied(dirs):
    audit_dir, projects = dirs
    claims = _claims()
    claims.append({"field": "scan.tier", "outcome": "corrected", "evidence": "main.py:1",
                   "correction": 2, "why": "a test correction the record does not hold"})
    _write(audit_dir, _audit(claims=claims))
    assert audits.audit_status(RID, audit_dir, projects) == "corrected-pending"
    assert audits.pending_corrections(audit_dir, projects) == [
        audits.PendingCorrection(RID, "scan.tier", 1, 2)]
    assert audits.audit_summary(audit_dir, projects)["records_pending"] == 1
    path = projects / f"{RID}.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("  tier: 1\n", "  tier: 2\n"),
                    encoding="utf-8")
    assert audits.audit_status(RID, audit_dir, projects) == "partly verified"
    assert audits.pending_corrections(audit_dir, projects) == []


def test_summary_counts_claims_and_the_share_corrected(dirs):
    audit_dir, projects = dirs
    shutil.copy(PROJECTS_DIR / "jik876__hifi-gan.yaml", projects / "jik876__hifi-gan.yaml")
    hifi = load_record(projects / "jik876__hifi-gan.yaml").data
    _write(audit_dir, _audit())
    _write(audit_dir, {"record": "jik876__hifi-gan", "commit": hifi["commit"], "reader": "r",
                       "claims": [_claim(evidence="train.py:1")]}, name="jik876__hifi-gan")
    assert audits.audit_summary(audit_dir, projects) == {
        "records_audited": 2, "claims_checked": 5, "corrected": 1, "unverifiable": 1,
        "share_corrected": 0.2, "records_pending": 0,
        # two records' audited fields: cutblur 4 checked (one unverifiable), hifi-gan 1
        "fields": {"verified": 4, "corrected-pending": 0, "unverifiable": 1,
                   "not checked": _fields(projects, RID) + _fields(projects, "jik876__hifi-gan")
                   - 5}}
    empty = audit_dir.parent / "none"
    assert audits.audit_summary(empty, projects)["share_corrected"] == 0.0


def test_committed_audit_files_are_valid():
    assert audits.audit_problems() == []
    assert audits.pending_corrections() == []  # every standing correction is in its record


OUTSIDE = ("clovaai__cutblur", "rusty1s__pyg_autoscale", "HazyResearch__hyena-dna",
           "haotian-liu__LLaVA")


@pytest.mark.parametrize("rid", OUTSIDE)
def test_the_outside_audits_corrections_are_applied(rid):
    audit = audits.load_audit(rid)
    assert audit is not None and audit.reader == "outside audit (issue 25)"
    assert any(c.outcome == "corrected" for c in audit.claims)
    assert audits.audit_status(rid) != audits.PENDING


def test_a_correction_holds_where_the_record_adds_later_fields():
    """Issue 43 gave each reported result a `config`: a correction of the rows written before it
    still holds when the record carries the same rows with their configs, and not otherwise."""
    rows = [{"metric": "acc", "value": 74.0, "dataset": "CSQA"}]
    assert audits.holds([{**rows[0], "config": "GreaseLM on CSQA"}], rows)
    assert not audits.holds([{**rows[0], "value": 79.0, "config": "x"}], rows)
    assert not audits.holds([{"metric": "acc", "dataset": "CSQA"}], rows)  # a key it lost
    assert not audits.holds([*rows, *rows], rows) and audits.holds("a", "a")
    for rid in ("snap-stanford__GreaseLM", "tim-learn__SHOT", "kimiyoung__ssl_bad_gan"):
        assert audits.audit_status(rid) != audits.PENDING, rid


def _fields(projects: Path, rid: str) -> int:
    """How many audited fields the record has."""
    return len(audits.field_statuses(load_record(projects / f"{rid}.yaml").data or {}, []))


def test_verified_counts_fields_and_a_record_is_verified_only_when_every_field_is(dirs):
    """Issue 43: a record whose audit checked four claims is not "verified"; each audited field has
    its own status, a claim inside a field covers it, and a field the record lacks is not counted."""
    audit_dir, projects = dirs
    rec = load_record(projects / f"{RID}.yaml").data
    assert rec is not None
    claims = [("scan.licence.spdx", "ok", None), ("curated.reported_results", "unverifiable", None),
              ("scan.tier", "corrected", 2)]
    st = audits.field_statuses(rec, claims)
    assert st["scan.licence"] == "verified"  # covered by a claim about a key inside it
    assert st["curated.reported_results"] == "unverifiable"
    assert st["scan.tier"] == "corrected-pending"  # the record holds tier 1
    assert st["curated.train_command"] == "not checked"
    assert "curated.command_result" not in st  # no reported results: nothing to say which row
    assert not audits.covers("scan.licences", "scan.licence")
    every = [(f, "ok", None) for f in st]
    assert set(audits.field_statuses(rec, every).values()) == {"verified"}
    _write(audit_dir, _audit(claims=[{"field": f, "outcome": "ok", "evidence": "x.py:1"}
                                     for f in st]))
    assert audits.audit_status(RID, audit_dir, projects) == "verified"
    assert audits.record_status(rec, audit_dir) == "verified"
    assert set(audits.record_field_statuses(rec, audit_dir).values()) == {"verified"}
    assert set(audits.record_field_statuses(rec, audit_dir.parent).values()) == {"not checked"}


def test_a_later_read_of_the_same_field_supersedes_the_earlier_one(dirs):
    """An audit file grows by later reads appended below: when a later reader corrects a field the
    earlier one had corrected to another value, the later claim stands (not a pending correction)."""
    audit_dir, projects = dirs
    earlier = {"field": "scan.tier", "outcome": "corrected", "evidence": "main.py:1",
               "correction": 2, "why": "an earlier reader's value"}
    later = {"field": "scan.tier", "outcome": "ok", "evidence": "main.py:1 read again"}
    _write(audit_dir, _audit(claims=[*_claims(), earlier]))
    assert audits.audit_status(RID, audit_dir, projects) == "corrected-pending"
    _write(audit_dir, _audit(claims=[*_claims(), earlier, later]))
    assert audits.audit_status(RID, audit_dir, projects) == "partly verified"
    assert audits.pending_corrections(audit_dir, projects) == []
    assert audits.standing([("scan.tier", "ok", None), ("scan.licence", "ok", None),
                            ("scan.tier", "corrected", 3)]) == [("scan.licence", "ok", None),
                                                                ("scan.tier", "corrected", 3)]


def test_a_later_claim_about_a_part_supersedes_that_part_of_an_earlier_whole_correction() -> None:
    """The seventh read's fixer had to restate whole-field count claims: a later correction of
    `scan.training_path_counts.item` left the earlier whole-mapping correction (item 5) standing,
    so a record holding item 8 read corrected-pending."""
    counts = "scan.training_path_counts"
    earlier = (counts, "corrected", {"item": 5, "host_transfer": 14})
    later = [(f"{counts}.item", "corrected", 8), (f"{counts}.host_transfer", "ok", None)]
    stood = audits.standing([earlier, *later])
    assert stood[0] == (counts, "corrected", {"item": 8})  # item superseded, host_transfer checked ok
    record = {"id": "x", "scan": {"training_path_counts": {"item": 8, "host_transfer": 15}}}
    assert audits.field_statuses(record, [earlier, *later])[counts] == "verified"
    assert audits.field_statuses(record, [earlier])[counts] == "corrected-pending"
    # a list item: the later claim replaces that item only
    data = "scan.runnability.data"
    whole = (data, "corrected", [{"name": "A", "evidence": "old"}, {"name": "B", "evidence": "b"}])
    part = (f"{data}[0].evidence", "corrected", "new")
    assert audits.standing([whole, part])[0][2] == [{"name": "A", "evidence": "new"},
                                                     {"name": "B", "evidence": "b"}]
