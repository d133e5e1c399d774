"""corpus/problem.py: the problem statement per record (issue 25), on the committed records.

Records: tkipf__pygcn (no reported results, an environment block), fundamentalvision__Deformable-
DETR (tier 3: the MultiScaleDeformableAttention kernel, three reported results) and
akamaster__pytorch_resnet_cifar10 (tier 2, reported results, no environment block).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu2tpu.cli import main
from gpu2tpu.corpus.problem import (
    GUIDANCE,
    LABELS,
    ProblemError,
    problem_statement,
    resolve,
)
from gpu2tpu.corpus.records import PROJECTS_DIR, load_record, load_records

PYGCN, DETR, RESNET = "tkipf__pygcn", "fundamentalvision__Deformable-DETR", \
    "akamaster__pytorch_resnet_cifar10"


def _record(rid: str) -> dict[str, Any]:
    data = load_record(PROJECTS_DIR / f"{rid}.yaml").data
    assert data is not None, rid
    return data


def _by_source(statement: dict[str, Any]) -> dict[str, str]:
    return {c["source"]: c["claim"] for c in statement["claims"]}


def _facts(value: Any) -> list[str]:
    """The strings a claim built from this value must contain."""
    if isinstance(value, (str, int, float)):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value] or ["No "]
    assert isinstance(value, dict), value
    if "metric" in value:  # a reported result, with the configuration it belongs to
        return [str(value[k]) for k in ("metric", "value", "dataset", "config")]
    if "why" in value:  # curated.command_result: none or unknown, naming the command's config
        return [str(value["config"]), "reports no result" if value["row"] == "none"
                else "is not established"]
    if "where" in value:  # an evidence line or an environment item
        return [str(value[k]) for k in ("name", "version", "stack", "where") if k in value]
    if not any(value.values()):  # counts, all zero: the claim says none was counted
        return ["no "] + [LABELS[k].split()[0] for k in ("autocast", "grad_scaler")]
    return [f"{LABELS[k]} {n}" for k, n in value.items()]


@pytest.mark.parametrize("rid", [PYGCN, DETR, RESNET])
def test_every_claim_resolves_to_the_value_it_states(rid: str) -> None:
    rec = _record(rid)
    claims = problem_statement(rec)["claims"]
    assert len(claims) >= 6
    for c in claims:
        value = resolve(rec, c["source"])
        facts = _facts(value)
        if c["claim"].startswith("Also reported for this configuration: "):  # the command's own
            assert value["config"] == rec["curated"]["command_result"]["config"]
            facts.remove(str(value["config"]))
        for fact in facts:
            assert fact in c["claim"], (c, fact)
        if " at " in c["source"]:  # file:line: the item's own where, repeated in the claim
            assert value["where"] == c["source"].rsplit(" at ", 1)[1]


@pytest.mark.parametrize("rid", [PYGCN, DETR, RESNET])
def test_text_is_only_claims_and_guidance(rid: str) -> None:
    st = problem_statement(_record(rid))
    rest = st["text"]
    for piece in [c["claim"] for c in st["claims"]] + list(GUIDANCE):
        assert rest.count(piece) == 1, piece
        rest = rest.replace(piece, "")
    assert rest.strip() == "", rest  # no sentence without a source, other than guidance


def test_pygcn_command_hazards_and_stated_environment() -> None:
    st = problem_statement(_record(PYGCN))
    by = _by_source(st)
    assert "`cd pygcn && python train.py`" in st["text"]
    assert by["curated.train_command"] == "Command to keep working: `cd pygcn && python train.py`."
    assert by["curated.reported_results"] == "No README-reported goal metric is recorded."
    # pygcn/train.py at 1600b5b: seven `.item()` reads, a host sync each on XLA
    assert by["scan.training_path_counts.item"] == (
        "In the code the training entry can reach (uncalled functions left out; code behind "
        "options the command leaves off may still count): `.item()` 7 (a host sync per call on "
        "XLA, where the run reaches it).")
    assert by["scan.counts.{cuda_call,torch_cuda}"].startswith("Repository: `.cuda()` 7, ")
    assert by["environment.torch[0] at README.md:22"] == "Stated torch: 0.4 (README.md:22)."
    assert by["scan.cuda_only.hard"] == "No hard CUDA-only dependency is on the training path."
    assert 80 <= len(st["text"].split()) <= 200


def test_tier3_record_names_its_hard_kernel_and_goal() -> None:
    st = problem_statement(_record(DETR))
    by = _by_source(st)
    where = "models/ops/functions/ms_deform_attn_func.py:18"
    assert by[f"scan.cuda_only.evidence[0] at {where}"] == (
        "Hard CUDA-only dependency kernel:MultiScaleDeformableAttention (a compiled CUDA module), "
        f"used at {where}: replace it for XLA.")
    assert by["curated.reported_results[0]"] == (
        "Goal metric (README, for this command's configuration: Deformable DETR, R50, 50 epochs "
        "(configs/r50_deformable_detr.sh)): box_AP 44.5 on COCO 2017 val.")
    assert "curated.reported_results[2]" not in by  # two results told, the rest left out
    assert by["scan.counts.distributed"].startswith("Repository: torch.distributed/DDP 25 (")
    assert "`GPUS_PER_NODE=8 ./tools/run_dist_launch.sh 8 ./configs/r50_deformable_detr.sh " \
        "--batch_size 4`" \
        in st["text"]


def test_the_commands_reported_result_becomes_the_goal() -> None:
    by = _by_source(problem_statement(_record(RESNET)))
    assert by["curated.reported_results[0]"] == (
        "Goal metric (README, for this command's configuration: ResNet20): top1_error 8.27 on "
        "CIFAR-10.")
    assert by["curated.reported_results[1]"] == "Reported for ResNet56: top1_error 6.61 on CIFAR-10."
    assert not any(s.startswith("environment") for s in by)  # the record has no such block


def test_every_record_lists_its_training_path_hazards() -> None:
    loaded = [r.data for r in load_records() if r.data is not None]
    assert len(loaded) >= 100
    for rec in loaded:
        st = problem_statement(rec)
        sources = [c["source"] for c in st["claims"]]
        path_counts = rec["scan"]["training_path_counts"]
        for key, n in path_counts.items():
            named = [s for s in sources if s.startswith("scan.training_path_counts")
                     and key in s]
            assert bool(named) == (n > 0), (rec["id"], key, n)
        if rec["scan"]["cuda_only"]["hard"]:
            assert any(s.startswith("scan.cuda_only.evidence[") for s in sources), rec["id"]
        assert 80 <= len(st["text"].split()) <= 320, rec["id"]  # one screen


def test_same_record_same_bytes_whatever_the_key_order() -> None:
    rec = _record(DETR)
    shuffled = copy.deepcopy(rec)
    for key in ("counts", "training_path_counts"):
        shuffled["scan"][key] = dict(reversed(list(shuffled["scan"][key].items())))
    shuffled = dict(reversed(list(shuffled.items())))
    assert problem_statement(rec) == problem_statement(shuffled) == problem_statement(rec)


@pytest.mark.parametrize("field", ["curated.train_command", "scan.training_path_counts",
                                   "commit"])
def test_missing_required_field_is_named(field: str) -> None:
    rec = _record(PYGCN)
    *parents, last = field.split(".")
    node = rec
    for p in parents:
        node = node[p]
    del node[last]
    with pytest.raises(ProblemError, match=rf"tkipf__pygcn: {field} must be .*gpu2tpu corpus "
                       "check"):
        problem_statement(rec)


def test_resolve_refuses_a_wrong_file_line() -> None:
    rec = _record(PYGCN)
    assert resolve(rec, "environment.torch[0] at README.md:22")["version"] == "0.4"
    with pytest.raises(KeyError, match="where is not README.md:99"):
        resolve(rec, "environment.torch[0] at README.md:99")
    with pytest.raises(KeyError, match=r"environment.torch\[5\] is absent"):
        resolve(rec, "environment.torch[5]")


def test_cli_prints_the_statement(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = PROJECTS_DIR / f"{PYGCN}.yaml"
    assert main(["corpus", "problem", str(path)]) == 0
    assert capsys.readouterr().out == problem_statement(_record(PYGCN))["text"]
    broken = _record(PYGCN)
    del broken["curated"]["train_command"]
    bad = tmp_path / "broken.yaml"
    bad.write_text(yaml.safe_dump(broken), encoding="utf-8")
    assert main(["corpus", "problem", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml: tkipf__pygcn: curated.train_command must be a str" in err


def test_more_hard_dependencies_than_told_are_listed_by_name() -> None:
    rec = _record(DETR)
    cuda_only = rec["scan"]["cuda_only"]
    cuda_only["hard"] = [*cuda_only["hard"], "apex", "flash_attn", "spconv"]
    by = _by_source(problem_statement(rec))
    assert by["scan.cuda_only.hard"] == ("Hard CUDA-only dependencies in all: kernel:"
                                         "MultiScaleDeformableAttention, apex, flash_attn, spconv.")
    # no hard site in the evidence for apex: the name is told without a file:line
    assert by["scan.cuda_only.hard[1]"] == ("Hard CUDA-only dependency apex (a CUDA-only package) "
                                            "on the training path: replace it for XLA.")
    assert "scan.cuda_only.hard[3]" not in by
