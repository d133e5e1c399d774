"""`corpus build` -> a dataset directory that `datasets.load_dataset` reads offline."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from corpus_helpers import TASK
from huggingface_hub import DatasetCard

import gpu2tpu.corpus
from gpu2tpu.cli import main
from gpu2tpu.corpus import DATA_DIR, revision
from gpu2tpu.corpus.build import BuildError, build
from gpu2tpu.corpus.hub import load
from gpu2tpu.corpus.records import PROJECTS_DIR, record_paths
from gpu2tpu.corpus.schema import PROJECT_FEATURES, TASK_FEATURES
from gpu2tpu.corpus.shipped import content_revision


def _offline_python(code: str, tmp: Path) -> Any:
    """Run code in a fresh interpreter with the Hub unreachable by policy; return its JSON."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp / "hf_home"), "HF_ENDPOINT": "http://127.0.0.1:9"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _build(small, out: Path, tasks: Path | None = None):
    return build(out, small["projects"], small["curation"], tasks or small["tasks"])


def test_load_dataset_offline_returns_rows_with_features(small, tmp_path):
    out = tmp_path / "ds"
    res = _build(small, out)
    assert res.counts == {"projects/main": 2, "projects/reference_only": 1, "tasks/practice": 1,
                          "tasks/upstream": 0}
    code = f"""
import json, datasets
p = datasets.load_dataset({str(out)!r}, "projects")
t = datasets.load_dataset({str(out)!r}, "tasks")
main = p["main"]
print(json.dumps({{"splits": sorted(p), "main": main.num_rows, "ref": p["reference_only"].num_rows,
    "ids": list(main["id"]), "tiers": list(main["tier"]), "features": main.features.to_dict(),
    "task_features": t["practice"].features.to_dict(), "task": t["practice"][0]["command"],
    "perf": t["practice"][0]["performance"], "results": main[0]["reported_results"],
    "command_result": main[0]["command_result"]}}))
"""
    got = _offline_python(code, tmp_path)
    assert got["splits"] == ["main", "reference_only"]
    assert got["main"] == 2 and got["ref"] == 1
    assert got["ids"] == ["alice__a", "bob__b"] and got["tiers"] == [0, 3]
    assert got["features"] == PROJECT_FEATURES.to_dict()
    assert got["task_features"] == TASK_FEATURES.to_dict()
    assert got["task"] == ["train.py", "--steps", "4"]
    assert got["perf"]["host_sync_allowance"] == pytest.approx(0.1)
    assert got["results"] == [{"metric": "top1_accuracy", "value": 76.1, "dataset": "CIFAR-10",
                               "config": "ResNet-18, CIFAR-10"}]
    assert got["command_result"] == {"status": "matched", "row": 0, "config": "ResNet-18, CIFAR-10",
                                     "why": "README.md:12 gives 76.1 for this command"}


def test_build_is_deterministic_and_revision_is_the_rows_hash(small, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    ra, rb = _build(small, a), _build(small, b)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    parts = []  # each split's path and its rows as canonical JSON, in path order
    for path in sorted(a.glob("data/*.parquet")):
        rows = json.dumps(pq.read_table(path).to_pylist(), sort_keys=True, ensure_ascii=False,
                          separators=(",", ":"))
        parts.append(f"data/{path.name}\n{rows}\n".encode())
    digest = hashlib.sha256(b"".join(parts)).hexdigest()[:12]
    assert ra.revision == rb.revision == digest == (a / "REVISION").read_text().strip()


def test_revision_is_the_content_not_the_parquet_bytes(small, tmp_path):
    """Another writer (pyarrow version, compression) gives other bytes but the same revision."""
    out = tmp_path / "ds"
    res = _build(small, out)
    path = out / "data/projects-main.parquet"
    before = path.read_bytes()
    pq.write_table(pq.read_table(path), path, compression="snappy")
    assert path.read_bytes() != before
    assert content_revision(out) == res.revision


def test_card_and_side_files(small, tmp_path):
    out = tmp_path / "ds"
    _build(small, out)
    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["license"] == "apache-2.0" and meta["pretty_name"]
    parsed = DatasetCard.load(out / "README.md").data  # the Hub's own card parser accepts it
    assert parsed.license == "apache-2.0" and parsed.configs == meta["configs"]
    assert [c["config_name"] for c in meta["configs"]] == ["projects", "tasks"]
    for section in ("## Citation", "## Schema: `projects`", "## How it was built",
                    "## Inclusion criteria", "## Difficulty", "## Distribution"):
        assert section in card
    assert "| vision | 1 | 0 | 0 | 1 |" in card  # domain x bucket table (alice/a is easy)
    for section in ("## Links", "## Example record", "## How tasks are graded",
                    "## Limitations", "**Licence.**"):
        assert section in card, section
    assert "From GPU to TPU with Coding Agents: What Works, What Fails, and What It Costs?" in card
    assert "covers this metadata only" in card
    assert "| cpu_task | projects | examples |" in card
    sizes = {i["config_name"]: {s["name"]: s["num_examples"] for s in i["splits"]}
             for i in meta["dataset_info"]}
    assert sizes == {"projects": {"main": 2, "reference_only": 1}, "tasks": {"practice": 1}}
    example = json.loads(card.split("## Example record")[1].split("```json\n")[1].split("```")[0])
    assert example["id"] == "alice__a" and example["split"] == "main"
    assert set(example) == set(PROJECT_FEATURES)  # every column, shown as a user gets it
    assert (out / "difficulty.svg").read_text().startswith("<svg")
    considered = (out / "considered.tsv").read_text().splitlines()
    assert considered[0] == "repo\tdecision\treason\tdetail\tlog" and len(considered) == 5


def test_no_tasks_omits_the_config_and_load_gives_empty(small, tmp_path):
    out = tmp_path / "ds"
    res = _build(small, out, tasks=small["root"] / "no_tasks")
    assert res.counts["tasks/practice"] == 0 and not (out / "data/tasks-practice.parquet").exists()
    meta = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["projects"]
    tasks = load("tasks", data_dir=out)
    assert tasks["practice"].num_rows == 0 and tasks["practice"].features == TASK_FEATURES
    main_split = load("projects", "main", data_dir=out)
    assert main_split.num_rows == 2 and main_split.features == PROJECT_FEATURES


def test_build_refuses_invalid_records_unless_allowed(small, tmp_path, capsys):
    projects = tmp_path / "projects"
    projects.mkdir()
    for p in small["projects"].glob("*.yaml"):
        (projects / p.name).write_text(p.read_text())
    bad = projects / "alice__a.yaml"
    bad.write_text(bad.read_text().replace("https://arxiv.org", "ftp://arxiv.org"))
    with pytest.raises(BuildError, match="curated.paper_url"):
        build(tmp_path / "ds", projects, small["curation"], small["tasks"])
    argv = ["corpus", "build", "--out", str(tmp_path / "ds"), "--projects-dir", str(projects),
            "--curation-dir", str(small["curation"]), "--task-dir", str(small["tasks"])]
    assert main(argv) == 2
    assert main([*argv, "--allow-invalid"]) == 0
    assert "projects/main: 2" in capsys.readouterr().out


def test_bad_task_yaml_names_the_field(small, tmp_path):
    tasks = tmp_path / "tasks"
    (tasks / "t").mkdir(parents=True)
    (tasks / "t" / "task.yaml").write_text(yaml.safe_dump({**TASK, "steps": "forty"}))
    with pytest.raises(BuildError, match=r"task.yaml: steps: expected int"):
        build(tmp_path / "ds", small["projects"], small["curation"], tasks)


def test_a_task_folder_named_other_than_its_task_id_is_refused(small, tmp_path):
    """The finder lists tasks by folder: a row under another name would be a task nobody lists."""
    tasks = tmp_path / "tasks"
    (tasks / "other").mkdir(parents=True)
    (tasks / "other" / "task.yaml").write_text(yaml.safe_dump(TASK))
    with pytest.raises(BuildError, match=r"task_id 'toy' differs from its folder 'other'"):
        build(tmp_path / "ds", small["projects"], small["curation"], tasks)


def test_stats_cli(small, capsys):
    assert main(["corpus", "stats", "--projects-dir", str(small["projects"])]) == 0
    out = capsys.readouterr().out
    assert "3 project record(s)" in out
    lines = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines() if ln.strip()}
    assert lines["vision"] == ["1", "0", "0", "0", "1"]  # easy medium hard ? total
    bucket = yaml.safe_load((small["projects"] / "bob__b.yaml").read_text())["scan"]["bucket"]
    want = ["0", "0", "0", "0", "1"]
    want[["easy", "medium", "hard"].index(bucket)] = "1"
    assert lines["nlp"] == want
    assert lines["3"] == ["1", "0", "1"]  # tier 3: one main record (bob/b), none reference_only


def test_embedded_corpus_matches_records(tmp_path):
    """The copy shipped in the package holds exactly the records in corpus/projects."""
    n_records = len(record_paths(PROJECTS_DIR))
    assert (DATA_DIR / "README.md").exists(), "run `gpu2tpu corpus build`"
    ds = gpu2tpu.corpus.load("projects")
    assert ds["main"].num_rows + ds["reference_only"].num_rows == n_records
    ids = sorted([*ds["main"]["id"], *ds["reference_only"]["id"]])
    assert ids == sorted(p.stem for p in record_paths(PROJECTS_DIR))
    assert revision() == content_revision(DATA_DIR)
    code = f"""
import json, datasets
p = datasets.load_dataset({str(DATA_DIR)!r}, "projects")
print(json.dumps({{k: v.num_rows for k, v in p.items()}}))
"""
    got = _offline_python(code, tmp_path)
    assert sum(got.values()) == n_records
