"""Issue 21: in-process records are claims. Migrations of cifar_amp whose training never leaves the
CPU rewrite what the probe writes (devices, XLA counters, runtime facts) so that every in-process
line passes; written to slip past a static scan (forged_evidence_attacks.py). The supervisor's
kernel view (record/kernel_view.py), recorded from outside the process, must contradict them;
correct migrations must not be flagged. Graded end to end with `evaluate` on the XLA CPU device
(minutes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from forged_evidence_attacks import DUMMY_XLA_WORK, GC_FILTER, PIPE_RELAY, forged_patch
from security_attacks import prediction

from gpu2tpu.harness.evaluate import evaluate_predictions
from gpu2tpu.judge.regrade import regrade_report
from gpu2tpu.record.calibration import CALIBRATION
from gpu2tpu.record.report import KERNEL, SCAN, TRACE, ReportError
from gpu2tpu.record.workspace import apply_patch, diff_dirs
from gpu2tpu.tasks.finder import find_task
from gpu2tpu.tasks.spec import RunSpec

ATTACKS = ("gc_filter", "pipe_relay", "dummy_xla_work")


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    spec = find_task("cifar_amp")
    root = tmp_path_factory.mktemp("forged")
    mig = spec.task_dir / "migrations"
    lines = [prediction("gold", patch=spec.gold_patch.read_text())]
    lines += [prediction(f"alt-{p.stem}", patch=p.read_text())
              for p in sorted((mig / "alternatives").glob("*.patch"))]
    lines.append(prediction("gc_filter", patch=forged_patch(spec, root, "gc", GC_FILTER)))
    lines.append(prediction("pipe_relay", patch=forged_patch(spec, root, "pipe", PIPE_RELAY)))
    lines.append(prediction("dummy_xla_work", patch=forged_patch(spec, root, "dummy", DUMMY_XLA_WORK)))
    broken = apply_patch(spec, (mig / "broken" / "item_every_step.patch").read_text())
    try:  # (c): a shipped broken migration whose host reads are filtered out of its records
        lines.append(prediction("host_reads_hidden", patch=forged_patch(
            spec, root, "reads", GC_FILTER, base=broken.project, reads_only=True)))
    finally:
        broken.cleanup()
    lines.append(prediction("moved_back_to_cpu", patch=_moved_back_to_cpu(spec, root)))
    preds = root / "preds.jsonl"
    preds.write_text("".join(lines))
    summary = evaluate_predictions(preds, "forged", root / "runs", workers=2)
    assert not summary["errors"], summary["errors"]
    run = root / "runs" / "forged"
    reports = {json.loads((run / rel).read_text())["agent"]: run / rel for rel in summary["evaluations"]}
    return {"run": run, "reports": reports}


def _moved_back_to_cpu(spec: RunSpec, root: Path) -> str:
    """An honest mistake, no forgery: the gold's migration, but the loop calls the model on the
    host (`model.cpu()(x.cpu())`) after it was moved to the device and its optimizer built there,
    so the probe's first record says the parameters are on xla:0 and the later ones say the host."""
    gold = apply_patch(spec, spec.gold_patch.read_text())
    try:
        proj = root / "moved_back"
        shutil.copytree(gold.project, proj, ignore=shutil.ignore_patterns("__pycache__"))
    finally:
        gold.cleanup()
    train = proj / "train.py"
    text = train.read_text()
    for old, new in (("logits = model(images)", "logits = model.cpu()(images.cpu())"),
                     ("loss = criterion(logits, labels)", "loss = criterion(logits, labels.cpu())")):
        assert old in text, old
        text = text.replace(old, new)
    train.write_text(text)
    return diff_dirs(spec.project_dir, proj)


def _report(graded: dict, agent: str) -> dict:
    return json.loads(graded["reports"][agent].read_text())


def _supervisor(report: dict) -> list[dict]:
    lines = report["verdict"]["criteria"]["hardware"]["evidence"]
    return [e for e in lines if e.get("source") == "supervisor"]


def _line(report: dict, signal: str) -> dict:
    return next(e for e in _supervisor(report) if e.get("signal") == signal)


def test_the_attacks_forge_every_in_process_line(graded: dict) -> None:
    """What the forgers achieved: every hardware and performance line from inside the process
    passes, as it did before the kernel view (the attacks are real, not strawmen)."""
    for agent in (*ATTACKS, "host_reads_hidden"):
        report = _report(graded, agent)
        for name in ("hardware", "performance"):
            inside = [e for e in report["verdict"]["criteria"][name]["evidence"]
                      if e.get("source") == "in-process"]
            assert inside and all(e["ok"] for e in inside), (agent, name, inside)


@pytest.mark.parametrize("agent", ["gc_filter", "pipe_relay"])
def test_training_on_the_cpu_under_forged_records_is_caught_by_the_kernel_view(graded: dict,
                                                                                agent: str) -> None:
    report = _report(graded, agent)
    assert report["verdict"]["migrated"] is False
    assert report["verdict"]["category"] == "tampered"
    assert "hardware" in report["verdict"]["failing"]
    executed = _line(report, "kernel_xla_exec_shortfall")  # no CPU time in XLA's runtime threads
    assert not executed["ok"] and executed["category"] == "tampered", executed
    assert executed["value"] > 10 * executed["limit"]  # no XLA execution at all
    assert "claim the target" in executed["text"]
    eager = _line(report, "kernel_host_exec")  # the eager kernels ran on the host
    assert not eager["ok"] and eager["value"] > eager["limit"], eager
    mapped = next(e for e in _supervisor(report) if "runtime mapped" in e["text"])
    assert mapped["ok"] is (agent == "pipe_relay")  # it loads torch_xla: the library alone proves nothing


def test_xla_busy_work_beside_host_training_is_caught(graded: dict) -> None:
    """Real XLA programs in a thread beside the CPU training pass the execution line; the host's
    eager compute beside them does not."""
    report = _report(graded, "dummy_xla_work")
    assert report["verdict"]["migrated"] is False
    assert _line(report, "kernel_xla_exec_shortfall")["ok"]
    eager = _line(report, "kernel_host_exec")
    assert not eager["ok"] and eager["category"] == "cpu_fallback", eager


def test_filtered_host_reads_are_invisible_to_the_kernel_view(graded: dict) -> None:
    """(c): the work runs on XLA as the gold's does; an extra sync per step is not where CPU time
    goes, so the kernel view agrees with the forged records. A known limit (docs/design.md)."""
    report = _report(graded, "host_reads_hidden")
    assert all(e["ok"] for e in _supervisor(report)), _supervisor(report)
    reads = next(e for e in report["verdict"]["criteria"]["performance"]["evidence"]
                 if "host reads" in e["text"])
    assert reads["ok"] and reads["source"] == "in-process"


def test_an_honest_device_mistake_is_not_tampered(graded: dict) -> None:
    """`tampered` is an accusation: a model moved back to the host by mistake is `wrong_device`,
    although the probe's early record put its parameters on the device and the kernel saw the
    training on the host."""
    verdict = _report(graded, "moved_back_to_cpu")["verdict"]
    assert verdict["migrated"] is False and verdict["category"] == "wrong_device", verdict["categories"]
    assert "tampered" not in verdict["categories"], verdict["categories"]
    assert "hardware" in verdict["failing"]


def test_correct_migrations_are_not_flagged(graded: dict) -> None:
    agents = [a for a in graded["reports"] if a == "gold" or a.startswith("alt-")]
    assert len(agents) == 4
    for agent in agents:
        report = _report(graded, agent)
        assert report["verdict"]["migrated"] is True, (agent, report["verdict"]["categories"])
        lines = _supervisor(report)
        assert len(lines) >= 5 and all(e["ok"] for e in lines), (agent, lines)
        for e in lines:
            if e.get("signal") in ("kernel_xla_exec_shortfall", "kernel_host_exec",
                                   "kernel_host_compute"):
                assert e["value"] <= 0.67 * e["limit"], (agent, e)  # a margin, not a near miss


def test_kernel_view_is_saved_hashed_and_regraded(graded: dict, tmp_path: Path) -> None:
    path = graded["reports"]["pipe_relay"]
    report = json.loads(path.read_text())
    assert KERNEL in report["files"]
    assert any(k.startswith("references/") and k.endswith("gold/" + KERNEL) for k in report["files"])
    assert regrade_report(path) == report["verdict"]
    run = tmp_path / "forged"
    shutil.copytree(graded["run"], run)
    copy = run / path.relative_to(graded["run"])
    kernel = copy.parent / KERNEL
    forged = json.loads(kernel.read_text())
    for thread in forged["threads"]:  # as if XLA's runtime had run the training
        thread["samples"]["xla_runtime"] = thread["samples"].get("xla_runtime", 0) + 9000
    kernel.write_text(json.dumps(forged))
    with pytest.raises(ReportError, match="kernel.json"):
        regrade_report(copy)
    # unlisted, a kernel view is not read: not even the gold's own, copied over the candidate's
    listed = json.loads(copy.read_text())
    del listed["files"][KERNEL]
    copy.write_text(json.dumps(listed))
    gold_kernel = next(k for k in listed["files"] if k.endswith("gold/" + KERNEL))
    shutil.copyfile(run / gold_kernel, kernel)
    verdict = regrade_report(copy)
    assert verdict["migrated"] is False
    line = _supervisor({"verdict": verdict})[0]
    assert line["category"] == "infra" and "the evaluation is incomplete" in line["text"]


def test_a_run_recorded_before_the_kernel_view_regrades_unverified(graded: dict, tmp_path: Path) -> None:
    """A run with no kernel view (recorded before the harness kept one, or with every view removed)
    regrades, but never as `migrated`: its hardware was not observed from outside it."""
    run = tmp_path / "forged"
    shutil.copytree(graded["run"], run)
    path = run / graded["reports"]["gold"].relative_to(graded["run"])
    report = json.loads(path.read_text())
    for name in [n for n in report["files"] if n.endswith(KERNEL)]:
        del report["files"][name]
        (run / name if name.startswith("references/") else path.parent / name).unlink()
    path.write_text(json.dumps(report))
    verdict = regrade_report(path)
    assert verdict["migrated"] is False and verdict["category"] == "unverified", verdict["categories"]
    assert verdict["silent"] is False  # not the agent's failure
    line = _supervisor({"verdict": verdict})[0]
    assert not line["ok"] and "no kernel view of this run or of its gold" in line["text"]


def test_a_run_recorded_before_the_scan_regrades_unverified(graded: dict, tmp_path: Path) -> None:
    """Neither scan.json nor any kernel view, as runs recorded before the harness kept them: the
    gold's migration regrades as `unverified`, each source saying its evidence is absent."""
    run = tmp_path / "forged"
    shutil.copytree(graded["run"], run)
    path = run / graded["reports"]["gold"].relative_to(graded["run"])
    report = json.loads(path.read_text())
    for name in [n for n in report["files"] if n == SCAN or n.endswith(KERNEL)]:
        del report["files"][name]
        (run / name if name.startswith("references/") else path.parent / name).unlink()
    path.write_text(json.dumps(report))
    verdict = regrade_report(path)
    assert verdict["migrated"] is False and verdict["categories"] == ["unverified"], verdict
    (scan,) = [e for e in verdict["criteria"]["runs"]["evidence"] if e.get("source") == "static-scan"]
    assert not scan["ok"] and "the patch was never scanned" in scan["text"]
    assert "no kernel view" in _supervisor({"verdict": verdict})[0]["text"]


def test_an_edited_calibration_trace_is_refused_and_an_unlisted_one_not_read(graded: dict,
                                                                            tmp_path: Path) -> None:
    """The calibration runs widen the step-0 limit (record/calibration.py): a submitter who moves
    their step-0 values far from the reference's would widen it to pass. A listed trace edited after
    the run is refused; one left on disk but unlisted is not read, so the floor stands."""
    path = graded["reports"]["gold"]
    report = json.loads(path.read_text())
    listed = sorted(k for k in report["files"] if f"/{CALIBRATION}/" in k and k.endswith("/" + TRACE))
    assert listed, "cifar_amp's references hold no listed calibration trace"
    run = tmp_path / "forged"
    shutil.copytree(graded["run"], run)
    copy = run / path.relative_to(graded["run"])
    trace = run / listed[0]
    lines = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    for rec in lines:
        for key in ("loss", "grad_norm"):
            if isinstance(rec.get(key), (int, float)):
                rec[key] = rec[key] * 50.0  # a step 0 that moved 49 times its value
    trace.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    with pytest.raises(ReportError, match=CALIBRATION):
        regrade_report(copy)
    unlisted = json.loads(copy.read_text())
    for k in listed:
        del unlisted["files"][k]
    copy.write_text(json.dumps(unlisted))
    step0 = [e for e in regrade_report(copy)["criteria"]["numerics"]["evidence"]
             if e.get("signal") in ("step0_loss", "step0_grad_norm")]
    assert step0 and all("no calibration runs" in e["text"] for e in step0)
