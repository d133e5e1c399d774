"""`curated.corrections`: audited corrections of derived fields survive every writer of the blocks,
and `corpus check` names a malformed or unapplied one."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpu2tpu.corpus import corrections
from gpu2tpu.corpus.records import PROJECTS_DIR, write_environment, write_scan

REASON = "README.md:12 requires mujoco-py"


def _record(tmp_path: Path, items: list) -> Path:
    path = tmp_path / "a__b.yaml"
    path.write_text(yaml.safe_dump({
        "schema_version": 1, "id": "a__b", "repo": "a/b", "commit": "0" * 40, "split": "main",
        "curated": {"datasets": [], "corrections": items},
        "environment": {"python": [], "torch": [{"version": "1.13", "where": "README.md:3",
                                                  "code": "PyTorch 1.13 or later"}]},
        "scan": {"tier": 1, "runnability": {"heavy_deps": [], "model": {"size": "medium"}}},
    }, sort_keys=False))
    return path


def test_every_writer_applies_the_corrections(tmp_path: Path) -> None:
    path = _record(tmp_path, [
        {"field": "scan.runnability.model.size", "value": "small", "reason": "train.py:117 builds a GIN"},
        {"field": "environment.torch[0].version", "value": ">=1.13", "reason": "README.md:3 says or later"},
    ])
    write_scan(path, {"tier": 2, "runnability": {"heavy_deps": [], "model": {"size": "medium"}}})
    data = yaml.safe_load(path.read_text())
    assert data["scan"] == {"tier": 2, "runnability": {"heavy_deps": [], "model": {"size": "small"}}}
    write_environment(path, {"python": [], "torch": [{"version": "1.13", "where": "README.md:3",
                                                      "code": "PyTorch 1.13 or later"}]})
    data = yaml.safe_load(path.read_text())
    assert data["environment"]["torch"][0]["version"] == ">=1.13"
    assert corrections.unapplied(data) == []


def test_an_unapplied_correction_is_named(tmp_path: Path) -> None:
    path = _record(tmp_path, [{"field": "scan.tier", "value": 2, "reason": "main.py:421 sets ddp"}])
    data = yaml.safe_load(path.read_text())  # written by hand: no writer applied it
    (field, what), = corrections.unapplied(data)
    assert field == "curated.corrections[0]" and "scan.tier" in what and "corpus scan" in what


@pytest.mark.parametrize("items, message", [
    ("scan.tier", "must be a list"),
    ([{"field": "scan.tier", "value": 2}], "exactly the keys"),
    ([{"field": "curated.datasets", "value": [], "reason": REASON}], "edit curated fields in place"),
    ([{"field": "scan", "value": {}, "reason": REASON}], "only fields under"),
    ([{"field": "scna.tier", "value": 2, "reason": REASON}], "starts with 'scna'"),
    ([{"field": "scan.tier", "value": 2, "reason": "trust me"}], "file:line"),
    ([{"field": "scan.tier", "value": 2, "reason": REASON}] * 2, "twice"),
])
def test_malformed_corrections_are_refused(items, message: str) -> None:
    assert any(message in what for _, what in corrections.problems(items)), \
        corrections.problems(items)


def test_shipped_corrections_are_held_and_cite_their_evidence() -> None:
    seen = 0
    for path in sorted(PROJECTS_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        items = (data.get("curated") or {}).get(corrections.CORRECTIONS)
        if items is None:
            continue
        seen += len(items)
        assert corrections.problems(items) == [], path.name
        assert corrections.unapplied(data) == [], path.name
    assert seen > 0
