"""Attacks on the grader by the graded code, each a real migration of cifar_amp evaluated with
`evaluate` on the XLA CPU device (minutes): each must be graded as it deserves, or refused."""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest
from security_attacks import (
    Listener,
    attack_patch,
    prediction,
    processes_with,
    project_copy,
    stray_child_patch,
)

from gpu2tpu.cache import cache_root
from gpu2tpu.harness.evaluate import evaluate_predictions
from gpu2tpu.judge.regrade import regrade_report
from gpu2tpu.record.execution import verify_manifest
from gpu2tpu.record.workspace import diff_dirs
from gpu2tpu.tasks.finder import find_task

HARNESS = Path(__file__).resolve().parents[2] / "harness"
FLOOD_MB = 200


def _patch_attacks(spec, work: Path, secret: Path) -> dict[str, str]:
    """Prediction lines that must be refused before anything runs, by name."""
    data = (spec.project_dir / "data.py").read_text()
    lines: dict[str, str] = {}
    edited = project_copy(spec, work / "edited")
    (edited / "data.py").write_text(data.replace("def ", "def _unused(): pass\n\ndef ", 1))
    plain = diff_dirs(spec.project_dir, edited)
    quoted = plain.replace("a/data.py", '"a/da\\164a.py"').replace("b/data.py", '"b/da\\164a.py"')
    lines["quoted_names"] = prediction("quoted_names", patch=quoted)
    blob = project_copy(spec, work / "blob")
    (blob / "data.py").write_bytes(b"\0\1\2" + data.encode())
    lines["binary_protected"] = prediction("binary_protected", patch=diff_dirs(spec.project_dir, blob))
    binfile = project_copy(spec, work / "binfile")
    (binfile / "weights.bin").write_bytes(b"\0\1\2\3" * 64)
    lines["binary_new_file"] = prediction("binary_new_file", patch=diff_dirs(spec.project_dir, binfile))
    shadow = project_copy(spec, work / "shadow")
    (shadow / "data").mkdir()
    (shadow / "data" / "__init__.py").write_text(data.replace("train", "train") + "\n# shadow\n")
    lines["shadow_package"] = prediction("shadow_package", patch=diff_dirs(spec.project_dir, shadow))
    renamed = project_copy(spec, work / "renamed")
    (renamed / "data.py").rename(renamed / "data_orig.py")
    (renamed / "data.py").write_text("from data_orig import *  # noqa\n")
    lines["rename_protected"] = prediction("rename_protected", patch=diff_dirs(spec.project_dir, renamed))
    link = project_copy(spec, work / "link")
    (link / "refs").symlink_to(cache_root())
    lines["link_in_patch"] = prediction("link_in_patch", patch=diff_dirs(spec.project_dir, link))
    outside = project_copy(spec, work / "outside")
    (outside / "model.py").unlink()
    (outside / "model.py").symlink_to(secret)
    lines["dir_link_outside"] = prediction("dir_link_outside", migrated_dir=str(outside))
    fifo = project_copy(spec, work / "fifo")
    os.mkfifo(fifo / "pipe")
    lines["dir_fifo"] = prediction("dir_fifo", migrated_dir=str(fifo))
    return lines


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One run: the full attack, then the honest gold migration, then the refused ones."""
    spec = find_task("cifar_amp")
    root = tmp_path_factory.mktemp("attacks")
    runs, mark = root / "runs", f"gpu2tpu-attack-{uuid.uuid4().hex}"
    secret = root / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    listener = Listener()
    bytecode = sorted(p.name for p in (HARNESS / "__pycache__").glob("*")) \
        if (HARNESS / "__pycache__").is_dir() else []
    patch = attack_patch(spec, root, cache=cache_root(), runs=runs, port=listener.port, mark=mark,
                         flood_mb=FLOOD_MB)
    refused = _patch_attacks(spec, root, secret)
    preds = root / "preds.jsonl"
    preds.write_text(prediction("attacker", patch=patch) +
                     prediction("gold", patch=spec.gold_patch.read_text()) + "".join(refused.values()))
    summary = evaluate_predictions(preds, "attacks", runs, workers=1)
    time.sleep(1.0)  # a surviving daemon would act now
    alive = processes_with(mark)
    listener.close()
    run = runs / "attacks"
    reports = {json.loads((run / rel).read_text())["agent"]: json.loads((run / rel).read_text())
               for rel in summary["evaluations"]}
    return {"spec": spec, "run": run, "reports": reports, "alive": alive, "listener": listener,
            "refused": list(refused), "secret": secret, "harness_bytecode": bytecode}


def _attack_log(attacked: dict) -> dict:
    err = (attacked["run"] / "attacker" / "cifar_amp" / "stderr.log").read_text()
    line = next(x for x in err.splitlines() if x.startswith("ATTACK "))
    return json.loads(line.removeprefix("ATTACK "))


def test_unmigrated_code_with_trace_swap_is_graded_on_its_own_trace(attacked: dict) -> None:
    report = attacked["reports"]["attacker"]
    assert report["verdict"]["migrated"] is False
    assert report["verdict"]["category"] == "wrong_device"
    seen = _attack_log(attacked)
    assert "trace.jsonl" not in seen["cmdline"]  # the trace travels through a pipe now
    assert seen["swap_trace"].startswith("no trace path and 0 gold traces visible")
    assert seen["visible_grader_files"] == 0 and seen["home_files"] == 0
    assert regrade_report(attacked["run"] / "attacker" / "cifar_amp" / "report.json") == report["verdict"]


def test_references_cannot_be_poisoned(attacked: dict) -> None:
    assert _attack_log(attacked)["poison_references"] in (0, "refused: OSError",
                                                          "refused: PermissionError")
    report = attacked["reports"]["gold"]
    assert report["verdict"]["migrated"] is True  # the honest migration after the attack
    bundle = attacked["run"] / report["reference"]["dir"]
    assert verify_manifest(bundle) is not None
    cached = next((cache_root() / "references").glob(f"cifar_amp-{report['reference']['id']}"))
    assert verify_manifest(cached) is not None


def test_install_and_task_are_read_only(attacked: dict) -> None:
    seen = _attack_log(attacked)
    spec = attacked["spec"]
    # A checkout under /tmp is covered by the sandbox's private /tmp: there the attack's writes land
    # in that tmpfs, so "written"; what matters either way is that nothing reaches the host's files.
    private = Path("/tmp").resolve()
    if not (HARNESS.resolve().is_relative_to(private) or spec.task_dir.resolve().is_relative_to(private)):
        assert seen["write_bytecode"].startswith("refused")
        assert seen["edit_evaluate_py"].startswith("refused")
    assert not (spec.task_dir / "evaluate.py").read_text().endswith("#x")
    assert not (spec.task_dir / "project" / "__pycache__").exists()
    assert not (HARNESS / "__pycache__" / "gpu2tpu_attack.pyc").exists()
    after = sorted(p.name for p in (HARNESS / "__pycache__").glob("*")) \
        if (HARNESS / "__pycache__").is_dir() else []
    assert set(after) - set(attacked["harness_bytecode"]) <= {n for n in after if "attack" not in n}


def test_no_network_and_no_surviving_daemon(attacked: dict) -> None:
    assert _attack_log(attacked)["network"].startswith("refused")
    assert attacked["listener"].connections == 0
    assert _attack_log(attacked)["daemon"] == "started"  # it did start ...
    assert attacked["alive"] == []  # ... and ended with the run's PID namespace


def test_output_is_capped(attacked: dict) -> None:
    out = attacked["run"] / "attacker" / "cifar_amp" / "stdout.log"
    assert out.stat().st_size < 17 * 1024 * 1024 < FLOOD_MB * 1024 * 1024
    assert "truncated" in out.read_bytes()[-200:].decode(errors="replace")
    process = json.loads((out.parent / "process.json").read_text())
    assert process["output_truncated"] == ["stdout"] and process["sandbox"] == "bwrap"
    assert attacked["reports"]["attacker"]["runtime"]["sandbox"] == "bwrap"


@pytest.mark.parametrize("name,reason", [
    ("quoted_names", "protected path 'data.py'"), ("binary_protected", "protected path 'data.py'"),
    ("binary_new_file", "binary patch"), ("shadow_package", "protected path 'data/__init__.py'"),
    ("rename_protected", "protected path 'data.py'"), ("link_in_patch", "outside the project"),
    ("dir_link_outside", "outside the project"), ("dir_fifo", "not a regular file")])
def test_bad_predictions_are_refused(attacked: dict, name: str, reason: str) -> None:
    report = attacked["reports"][name]
    assert report["verdict"]["category"] == "patch_rejected"
    eval_dir = attacked["run"] / name / "cifar_amp"
    assert reason in json.loads((eval_dir / "process.json").read_text())["patch_rejected"]
    assert "TOP-SECRET" not in (eval_dir / "patch.diff").read_text()


def test_stray_child_ends_at_the_time_limit(tmp_path: Path) -> None:
    spec = find_task("cifar_amp")
    mark = f"gpu2tpu-stray-{uuid.uuid4().hex}"
    preds = tmp_path / "preds.jsonl"
    preds.write_text(prediction("stray", patch=stray_child_patch(spec, tmp_path, mark)))
    summary = evaluate_predictions(preds, "stray", tmp_path / "runs", timeout_s=15)
    report = json.loads((tmp_path / "runs" / "stray" / summary["evaluations"][0]).read_text())
    assert report["verdict"]["category"] == "timeout"
    assert processes_with(mark) == []


def test_poisoned_cache_is_rebuilt_and_poisoned_run_refused(attacked: dict, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu2tpu.harness.references import copy_references, ensure_references
    from gpu2tpu.judge.regrade import IntegrityError
    from gpu2tpu.record.targets import get_target

    report = attacked["reports"]["gold"]
    key = report["reference"]["id"]
    cache = tmp_path / "cache"
    bundle = cache / "references" / f"cifar_amp-{key}"
    shutil.copytree(cache_root() / "references" / bundle.name, bundle)
    gold = bundle / "gold" / "trace.jsonl"
    gold.write_text(gold.read_text().replace('"max_norm": 1.0', '"max_norm": 5.0'))
    assert verify_manifest(bundle) is None
    with pytest.raises(ValueError, match="differ from the verified cache"):
        copy_references(bundle, tmp_path / "run" / "references" / key)

    class Rebuilding(Exception):
        pass

    def progress(message: str) -> None:
        if "do not match their sealed manifest" in message:
            raise Rebuilding(message)

    monkeypatch.setenv("GPU2TPU_CACHE", str(cache))
    with pytest.raises(Rebuilding):  # detected before use; the rebuild would start here
        ensure_references(attacked["spec"], get_target(report["target"]), progress)
    # a run whose references are changed after it was graded no longer regrades
    run_copy = tmp_path / "attacks"
    shutil.copytree(attacked["run"], run_copy)
    ref_trace = run_copy / report["reference"]["dir"] / "gold" / "trace.jsonl"
    ref_trace.write_text(ref_trace.read_text().replace('"max_norm": 1.0', '"max_norm": 5.0'))
    with pytest.raises(IntegrityError):
        regrade_report(run_copy / "attacker" / "cifar_amp" / "report.json")


def test_bytecode_in_a_task_changes_its_hash_and_never_reaches_evaluate(tmp_path: Path) -> None:
    from gpu2tpu.record.sealed import SOURCES_ONLY
    from gpu2tpu.tasks.spec import task_content_hash

    spec = find_task("cifar_amp")
    task = tmp_path / "cifar_amp"
    shutil.copytree(spec.task_dir, task)
    before = task_content_hash(task)
    (task / "__pycache__").mkdir()
    (task / "__pycache__" / "evaluate.cpython-311.pyc").write_bytes(b"forged accuracy 1.0")
    assert task_content_hash(task) != before
    copy = tmp_path / "copy"
    shutil.copytree(task, copy, ignore=SOURCES_ONLY)
    assert not (copy / "__pycache__").exists() and not (copy / "migrations").exists()
