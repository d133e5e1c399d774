"""The dataset card: `dataset_info` that `datasets` loads without a warning, the code URL, the
study's relation, and the changelog generated from the curation logs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml
from corpus_helpers import write_considered
from datasets import Features

from gpu2tpu.corpus import card
from gpu2tpu.corpus.build import NOTE_GLOBS, build, changelog, curation_notes
from gpu2tpu.corpus.records import CURATION_DIR, load_considered
from gpu2tpu.corpus.schema import CONFIG_FEATURES

# A rebalance note in the format of corpus/curation/rebalance-2026-12.md (shortened).
NOTE = """# Corpus rebalance and tier rule (issue 13)

Tier counts, 3 records each: before {1: 1, 3: 2}; after {1: 1, 2: 2}.

## Records that changed tier (evidence: name status file:line)

| record | tier | evidence |
|---|---|---|
| bob/b | 3 -> 2 | apex guarded train.py:3 |
| carl/c | 3 -> 2 | apex conditional train.py:9 |

## Swapped by the selection rule (corpus/selection.py, owner cap 4)

Out: erin/e, frank/f

In: alice/a (tier 0, main), carl/c (tier 2, reference_only)
"""
CAP = "selection rule: owner keeps its first 4; was a record before the rebalance"


def _curation(small: dict[str, Path], root: Path) -> Path:
    """The small corpus's logs plus a rebalance note and the removed projects' rows."""
    cur = root / "curation"
    shutil.copytree(small["curation"], cur)
    write_considered(cur, [("erin/e", "excluded", "owner_cap", CAP),
                           ("frank/f", "excluded", "too_large", "4 GiB of weights"),
                           ("gina/g", "excluded", "no_licence", "was a record before round 2")],
                     letter="Z")
    (cur / "rebalance-2026-12.md").write_text(NOTE)
    (cur / "rebalance-2027-01.md").write_text("# Round 2\n\nNo swaps.\n")
    return cur


def _meta(out: Path) -> dict[str, Any]:
    return yaml.safe_load((out / "README.md").read_text().split("---\n")[1])


CONTROL = "control: a warning about dataset_info from datasets.info"
LOAD = f"CONTROL = {CONTROL!r}\n" + """
import json, logging, sys, warnings, datasets
datasets.logging.set_verbosity_warning()
messages = []
class Keep(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
logging.getLogger("datasets").addHandler(Keep())
# control: a warning from a datasets module's own logger, as a card problem is reported
datasets.utils.logging.get_logger("datasets.info").warning(CONTROL)
got = {}
for folder in sys.argv[1:]:
    for config in ("projects", "tasks"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ds = datasets.load_dataset(folder, config)
        messages += [str(w.message) for w in caught]
        got[folder + ":" + config] = {name: {"features": split.features.to_dict(),
                                             "rows": split.num_rows} for name, split in ds.items()}
print(json.dumps({"messages": messages, "got": got}))
"""


def _load(tmp: Path, *folders: Path) -> Any:
    """Load both configs of each folder with the real `datasets`, offline, in a fresh
    interpreter; returns every log message and warning, and the features and rows loaded."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp / "hf_home"), "HF_ENDPOINT": "http://127.0.0.1:9"}
    out = subprocess.run([sys.executable, "-c", LOAD, *map(str, folders)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_load_dataset_warns_nothing_and_features_equal_the_cards(small, tmp_path):
    good = tmp_path / "good"
    build(good, small["projects"], _curation(small, tmp_path), small["tasks"])
    got = _load(tmp_path, good)
    # the capture sees what datasets' loggers warn (whichever release is installed: 5.0 reads a
    # card without split sizes silently, 5.2 warns about it, so no old card makes a control)
    assert CONTROL in got["messages"], got["messages"]
    got["messages"].remove(CONTROL)
    bad = [m for m in got["messages"] if any(w in m.lower() for w in
                                             ("dataset_info", "card", "yaml", "malformed"))]
    assert bad == []
    infos = {i["config_name"]: i for i in _meta(good)["dataset_info"]}
    assert sorted(infos) == ["projects", "tasks"]
    for config, info in infos.items():
        card_features = Features._from_yaml_list(info["features"])
        assert card_features == CONFIG_FEATURES[config]  # derived from the one schema
        loaded = got["got"][f"{good}:{config}"]
        assert {s["name"]: s["num_examples"] for s in info["splits"]} == \
            {name: split["rows"] for name, split in loaded.items()}
        for split in loaded.values():
            assert Features.from_dict(split["features"]) == card_features


def test_dataset_info_sizes_are_the_written_files(small, tmp_path):
    out = tmp_path / "ds"
    build(out, small["projects"], small["curation"], small["tasks"])
    for info in _meta(out)["dataset_info"]:
        files = {s["name"]: out / "data" / f"{info['config_name']}-{s['name']}.parquet"
                 for s in info["splits"]}
        for split in info["splits"]:
            table = pq.read_table(files[split["name"]])
            assert split["num_bytes"] == table.nbytes > 0
            assert split["num_examples"] == table.num_rows
        assert info["download_size"] == sum(f.stat().st_size for f in files.values())
        assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"])


def test_code_url_from_pyproject_else_the_constant(tmp_path):
    with_urls = tmp_path / "a.toml"
    with_urls.write_text('[project]\nname = "x"\n[project.urls]\n'
                         'Homepage = "https://example.org"\n'
                         'Repository = "https://git.example.org/x"\n')
    assert card.code_url(with_urls) == "https://git.example.org/x"  # Repository before Homepage
    without = tmp_path / "b.toml"
    without.write_text('[project]\nname = "x"\n')
    assert card.code_url(without) == card.CODE_URL


def test_card_states_code_url_study_relation_and_changelog(small, tmp_path):
    out = tmp_path / "ds"
    build(out, small["projects"], _curation(small, tmp_path), small["tasks"])
    text = (out / "README.md").read_text()
    assert f"- Code: {card.code_url()}" in text
    assert card.STUDY_RELATION in text and "148-project corpus" in card.STUDY_RELATION
    assert card.STUDY_TITLE in card.STUDY_RELATION
    log = text.split("## Changelog")[1].split("\n## ")[0]
    assert log.index("### 2027-01: Round 2") < log.index("### 2026-12: Corpus rebalance")
    assert "- Added (2): alice/a (tier 0, main); carl/c (tier 2, reference_only)" in log
    assert f"- Removed (1; excluded, owner_cap: {CAP}): erin/e" in log
    assert "- Removed (1; excluded, too_large: 4 GiB of weights): frank/f" in log
    assert "- 2 record(s) changed tier (3 -> 2: 2); the note lists each with its evidence." in log
    assert "Tier counts, 3 records each" in log
    # a former record that no note names still shows, with its reason
    assert "### Former records no rebalance note names" in log
    assert "- Removed (1; excluded, no_licence: was a record before round 2): gina/g" in log


def test_changelog_of_the_real_logs_names_every_swap_with_a_reason():
    considered, problems = load_considered(CURATION_DIR)
    assert problems == []
    changes = changelog(CURATION_DIR, considered)
    notes = curation_notes(CURATION_DIR)
    assert sorted(notes) == sorted(p for g in NOTE_GLOBS for p in CURATION_DIR.glob(g))  # once
    assert [c.source for c in changes][:len(notes)] == [p.name for p in notes]
    assert [p.name for p in notes][:9] == ["changes-2026-12-07f.md", "changes-2026-12-07e.md",
                                           "changes-2026-12-07d.md", "changes-2026-12-07c.md",
                                           "changes-2026-12-07b.md", "changes-2026-12-07.md",
                                           "changes-2026-12-06.md", "rebalance-2026-12-05.md",
                                           "rebalance-2026-12.md"]
    # the second read's tier table becomes one changelog item counting its moves
    assert any(i.startswith("12 record(s) changed tier (2 -> 3: 10, 3 -> 2: 2)")
               for i in changes[5].items), changes[5].items
    for change, note in zip(changes, notes):
        outs = [n.strip() for ln in note.read_text().splitlines() if ln.startswith("Out:")
                for n in ln.split(":", 1)[1].split(",") if n.strip()]
        removed = [i for i in change.items if i.startswith("Removed")]
        for repo in outs:
            line = next(i for i in removed if repo in i.rsplit("): ", 1)[1].split(", "))
            assert "no row in considered-*.tsv" not in line, repo
