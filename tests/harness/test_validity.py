"""Verdict validity (issue 11): blind spots closed, RNG-independent invariants, cross-checks that what
was recorded happened, category order, gold-derived time limits, task directories outside the package."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kernel_views import CLEAN_SCAN, GOLD

from gpu2tpu.errors import UserError
from gpu2tpu.judge import criteria, step0
from gpu2tpu.judge.criteria import CRITERION_NAMES
from gpu2tpu.judge.verdict import grade
from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.targets import get_target
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.sandbox.process import clean_env
from gpu2tpu.tasks.finder import TASK_DIRS_ENV, add_task_dirs, find_task

PROBED = """
import gc, random, sys
import numpy as np
import torch, torch.nn as nn
random.seed(1); np.random.seed(2); torch.manual_seed(3)
model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.25), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
mode = sys.argv[1]
for i in range(4):
    model.train(not (mode == "eval" and i >= 2))
    loss = model(torch.randn(16, 4)).pow(2).mean() * 100
    opt.zero_grad(); loss.backward()
    if mode == "functional":
        norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
        torch.nn.utils.clip_grads_with_norm_(model.parameters(), 0.5, norm)
    else:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5, foreach=True)
    if mode != "mul":
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.01 if mode == "value" else 0.25)
    if mode == "mul":
        for p in model.parameters():
            p.grad.mul_(0.1)
    if mode == "closure_after_backward":  # a closure that only returns the loss it already has
        opt.step(lambda: loss)
    else:
        opt.step()
if mode == "rebind_part":  # the probe's parts are importable modules: disarm the module hook
    import gpu2tpu_probe_hooks
    gpu2tpu_probe_hooks.hook_root_module = lambda rec, opt: None
if mode == "rebind":
    try:
        for obj in gc.get_objects():
            if type(obj).__name__ == "Recorder":
                obj.on_clip = lambda *a: None
    except Exception:
        pass
"""


def _probe(tmp_path: Path, mode: str) -> Trace:
    work = tmp_path / mode
    work.mkdir()
    (work / "train.py").write_text(PROBED)
    res = run_probed(["train.py", mode], work, work / "out", clean_env(), 120)
    assert res.exit_code == 0, (work / "out" / "stderr.log").read_text()
    return Trace.load(work / "out" / "trace.jsonl")


def _numerics_evidence(ref: Trace, cand: Trace, gold: Trace | None = None) -> list[dict[str, Any]]:
    rec = RunRecord(process={"exit_code": 0, "wall_s": 1.0}, trace=ref, goal={})
    gold_rec = RunRecord(process={"exit_code": 0, "wall_s": 1.0}, trace=gold, goal={}) if gold else rec
    inputs = criteria.Inputs(find_task("cifar_amp"), get_target("xla-cpu"), [rec], gold_rec,
                             RunRecord(process={"exit_code": 0, "wall_s": 1.0}, trace=cand, goal={}))
    return criteria.numerics(inputs).evidence


def _numerics_failures(ref: Trace, cand: Trace) -> list[dict[str, Any]]:
    return [e for e in _numerics_evidence(ref, cand) if not e["ok"]]


def test_probe_sees_every_clipping_entry_point_seeds_and_train_state(tmp_path: Path) -> None:
    ref = _probe(tmp_path, "plain")
    assert {s["fn"]: s["value"] for s in ref.seeds} == {"random.seed": 1, "numpy.random.seed": 2,
                                                        "torch.manual_seed": 3}
    step = ref.applied[0]
    assert step["clip"] == [{"max_norm": 0.5, "norm_type": 2.0}] and step["clip_value"] == [0.25]
    assert step["post_clip_norm"] <= min(step["grad_norm"], 0.5) * 1.02
    assert [s["train_modules"] for s in ref.applied] == [[4, 4]] * 4
    assert ref.model and [m[0] for m in ref.model["leaf_modules"]] == ["Linear", "Dropout", "Linear"]
    assert ref.model["leaf_modules"][1][1].startswith("p=0.25")
    assert ref.optimizer and ref.optimizer["param_dtypes"] == {"float32": 4}
    assert ref.integrity == {"event": "integrity", "rebound": []}
    functional = _probe(tmp_path, "functional")  # get_total_norm + clip_grads_with_norm_
    assert functional.applied[0]["clip"] == [{"max_norm": 0.5, "norm_type": 2.0}]
    assert not _numerics_failures(ref, functional)


def test_a_closure_that_evaluates_nothing_keeps_the_steps_losses(tmp_path: Path) -> None:
    """`opt.step(lambda: loss)` after the backward: the closure runs no forward or backward, so
    the step keeps the losses recorded before it (a closure-aware step starts where the closure's
    own evaluations start, and there are none)."""
    ref = _probe(tmp_path, "plain")
    closure = _probe(tmp_path, "closure_after_backward")
    assert [s["loss"] for s in closure.applied] == [s["loss"] for s in ref.applied]
    assert [s["batch_size"] for s in closure.applied] == [[16]] * 4
    assert not _numerics_failures(ref, closure)


@pytest.mark.parametrize(("mode", "words"), [("value", "clip_grad_value_"), ("eval", "eval mode"),
                                             ("mul", "after clipping")])
def test_blind_spots_are_config_drift(tmp_path: Path, mode: str, words: str) -> None:
    ref, cand = _probe(tmp_path, "plain"), _probe(tmp_path, mode)
    failed = [e for e in _numerics_failures(ref, cand) if words in e["text"]]
    assert failed and failed[0]["category"] == "config_drift", _numerics_failures(ref, cand)


def test_rebound_recorder_is_tampered(tmp_path: Path) -> None:
    trace = _probe(tmp_path, "rebind")
    assert trace.integrity and trace.integrity["rebound"] == ["on_clip"]


def test_rebound_probe_part_is_tampered(tmp_path: Path) -> None:
    """The probe's parts (gpu2tpu_probe_hooks, gpu2tpu_probe_counters) lie beside it, importable by
    the graded code: replacing one of their functions is reported like a rebound Recorder method."""
    trace = _probe(tmp_path, "rebind_part")
    assert trace.integrity and trace.integrity["rebound"] == ["gpu2tpu_probe_hooks.hook_root_module"]
    assert _probe(tmp_path, "plain").integrity == {"event": "integrity", "rebound": []}


def _steps(n: int, lr: float = 0.1, jitter: float = 0.0) -> list[dict[str, Any]]:
    return [{"step": i, "loss": 2.0 - 0.01 * i, "grad_norm": 1.0, "lr": [lr * (1 - i / n)], "clip": [],
             "micro_batches": 1, "batch_size": [8], "input_devices": ["xla:0"], "loss_device": "xla:0",
             "wall_s": 0.01 + i * 1e-5 + jitter} for i in range(n)]


def _run(steps: list[dict[str, Any]], seeds: list[dict[str, Any]] | None = None, wall_s: float = 10.0,
         **process: Any) -> RunRecord:
    runtime = {"backend": "xla", "device_type": "CPU", "device_count": 1, "devices_used": 1}
    trace = Trace(start={"event": "start"}, end={"exit_code": 0, "runtime": runtime},
                  optimizer={"class": "SGD", "groups": [{"lr": 0.1}], "param_count": 10,
                             "param_shapes_sha": "x", "param_devices": ["xla:0"],
                             "param_dtypes": {"float32": 2}},
                  steps=steps, seeds=seeds if seeds is not None else
                  [{"event": "seed", "fn": "torch.manual_seed", "value": 0}],
                  integrity={"event": "integrity", "rebound": []})
    # observed as a real run is (a clean scan, a kernel view with samples): what the supervisor
    # saw is not what these tests vary, and evidence the grader lacks is never a pass
    return RunRecord(process={"exit_code": 0, "wall_s": wall_s, **process}, trace=trace,
                     goal={"value": 0.5}, scan=CLEAN_SCAN, kernel=GOLD)


def test_a_trace_without_its_integrity_record_is_tampered() -> None:
    """The probe writes its integrity record just before its end record: a filter in front of the
    channel that drops it (so no rebound hook is reported) is itself the finding."""
    spec = find_task("cifar_amp")
    ref = _run(_steps(40))
    cand = _run(_steps(40, jitter=1e-3))
    assert grade(spec, get_target("xla-cpu"), [ref], ref, cand)["migrated"]
    cand.trace.integrity = None
    verdict = grade(spec, get_target("xla-cpu"), [ref], ref, cand)
    assert verdict["category"] == "tampered", verdict["categories"]


def test_fewer_steps_is_workload_changed_not_config_drift() -> None:
    spec = find_task("cifar_amp")
    ref = _run(_steps(40))
    verdict = grade(spec, get_target("xla-cpu"), [ref], ref, _run(_steps(20, jitter=1e-3)))
    assert verdict["category"] == "workload_changed", verdict["categories"]
    assert "config_drift" not in verdict["categories"]


def test_dropped_seed_and_copied_trace_are_caught() -> None:
    spec = find_task("cifar_amp")
    ref = _run(_steps(40))
    unseeded = grade(spec, get_target("xla-cpu"), [ref], ref, _run(_steps(40, jitter=1e-3), seeds=[]))
    assert unseeded["category"] == "config_drift"
    copy_of_gold = _run(copy.deepcopy(ref.trace.steps))
    assert grade(spec, get_target("xla-cpu"), [ref], ref, copy_of_gold)["category"] == "tampered"


def test_slow_run_stopped_by_gold_derived_limit_is_slow_with_ratio() -> None:
    spec = find_task("cifar_amp")
    gold_wall = 10.0
    limit = spec.time_limit(gold_wall)
    assert limit < spec.timeout_s and spec.time_limit(None) == spec.timeout_s
    assert spec.time_limit(1e6) == spec.timeout_s  # the absolute cap for hangs
    ref = _run(_steps(40), wall_s=gold_wall)
    slow = _run(_steps(5), wall_s=limit, timed_out=True)
    verdict = grade(spec, get_target("xla-cpu"), [ref], ref, slow)
    assert verdict["category"] == "slow"
    assert "x the gold" in next(e for e in verdict["criteria"]["runs"]["evidence"] if not e["ok"])["text"]
    hung = _run(_steps(5), wall_s=spec.timeout_s, timed_out=True)
    ref_slow_gold = _run(_steps(40), wall_s=spec.timeout_s)  # limit = cap: a hang is a timeout
    assert grade(spec, get_target("xla-cpu"), [ref], ref_slow_gold, hung)["category"] == "timeout"


def _timed(steps: list[dict[str, Any]], step_wall: float, step_cpu: float) -> list[dict[str, Any]]:
    return [{**s, "wall_s": step_wall, "cpu_s": step_cpu} for s in steps]


def _time_lines(verdict: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    evidence = verdict["criteria"]["performance"]["evidence"]
    return (next(e for e in evidence if "median step" in e["text"]),
            next(e for e in evidence if "process wall" in e["text"]))


def test_wall_time_stretched_by_a_busy_machine_is_not_slow() -> None:
    """Wall time over budget, step or process, is `slow` only when CPU time is over budget too, or
    the wall ratio net of the other processes' share of the machine (measured by the harness) is:
    other processes stretch wall time, not CPU time (measured: a correct migration at 3.47x the
    gold's wall time with five CPU-bound processes on two cores; the practice gold at 1.8-2.0x its
    own median step time with the suite's two workers)."""
    spec = find_task("cifar_amp")
    gold = _run(_timed(_steps(40), 0.01, 0.015), wall_s=10.0, cpu_s=8.0, others_cpu_share=0.0)
    cand = _timed(_steps(40, jitter=1e-3), 0.04, 0.016)
    busy = grade(spec, get_target("xla-cpu"), [gold], gold,
                 _run(cand, wall_s=40.0, cpu_s=9.0, others_cpu_share=0.8))
    step, process = _time_lines(busy)
    assert step["ok"] and "4.00x gold; CPU time 1.07x gold; other processes used 80% of the " \
        "machine: 0.80x net of them" in step["text"], step
    assert process["ok"] and "(CPU 9.0 s), 4.00x gold; CPU time 1.12x gold" in process["text"], process
    assert busy["category"] is None, busy["categories"]
    slower = grade(spec, get_target("xla-cpu"), [gold], gold,
                   _run(_timed(cand, 0.04, 0.06), wall_s=40.0, cpu_s=32.0, others_cpu_share=0.8))
    assert slower["category"] == "slow" and not any(line["ok"] for line in _time_lines(slower))
    no_cpu = grade(spec, get_target("xla-cpu"), [gold], _run(_steps(40), wall_s=10.0),
                   _run(cand, wall_s=40.0, cpu_s=9.0, others_cpu_share=0.8))  # a gold without CPU time
    assert no_cpu["category"] == "slow"
    # on a TPU the work runs on the chip, not the host CPU: CPU time does not excuse wall time there
    tpu = grade(spec, get_target("tpu"), [gold], gold, _run(cand, wall_s=40.0, cpu_s=9.0,
                                                            others_cpu_share=0.8))
    assert not any(line["ok"] or "CPU time" in line["text"] for line in _time_lines(tpu))


def test_a_run_that_waits_is_slow_unless_others_load_explains_it() -> None:
    """A migration that sleeps (in its steps, or before training) spends wall time, not CPU time:
    with CPU time alone as the busy machine's excuse it passed (blind spot). Net of the others'
    share it is slow on an idle machine, and beside a load that explains only part of its wait."""
    spec = find_task("cifar_amp")
    gold = _run(_timed(_steps(40), 0.01, 0.015), wall_s=10.0, cpu_s=8.0, others_cpu_share=0.0)
    sleeps = _timed(_steps(40, jitter=1e-3), 0.05, 0.015)
    for others in (0.0, 0.3):
        verdict = grade(spec, get_target("xla-cpu"), [gold], gold,
                        _run(sleeps, wall_s=50.0, cpu_s=8.1, others_cpu_share=others))
        assert verdict["category"] == "slow", others
        step, process = _time_lines(verdict)
        assert not step["ok"] and not process["ok"] and "net of them" in process["text"], process
    unknown = grade(spec, get_target("xla-cpu"), [gold], gold,  # load not measured: wall decides
                    _run(_timed(_steps(40, jitter=1e-3), 0.011, 0.015), wall_s=40.0, cpu_s=8.1))
    assert unknown["category"] == "slow" and _time_lines(unknown)[0]["ok"]
    assert "load was not measured" in _time_lines(unknown)[1]["text"]


def test_task_dir_outside_package_and_incomplete_task(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TASK_DIRS_ENV, raising=False)
    task = tmp_path / "mytask"
    shutil.copytree(find_task("varlen_cls").task_dir, task, ignore=shutil.ignore_patterns("__pycache__"))
    (task / "task.yaml").write_text((task / "task.yaml").read_text().replace(
        "task_id: varlen_cls", "task_id: my_varlen"))
    with pytest.raises(UserError, match="unknown task"):
        find_task("my_varlen")
    add_task_dirs([task])
    spec = find_task("my_varlen")
    assert spec.task_dir == task.resolve() and spec.gold_patch.is_file()
    (task / "migrations" / "gold.patch").unlink()
    with pytest.raises(UserError, match="gold.patch is missing"):
        _ = find_task("my_varlen").gold_patch
    with pytest.raises(UserError, match="no such directory"):
        add_task_dirs([tmp_path / "nowhere"])


def test_validate_confusion_table_counts_expected_against_graded() -> None:
    from gpu2tpu.harness.validate import Labelled, confusion_table, mismatches

    def verdict(category: str | None, silent: bool = True) -> dict[str, Any]:
        crit = {n: {"passed": not (category and n == "numerics"), "evidence": []}
                for n in criteria.CRITERION_NAMES}
        return {"migrated": category is None, "category": category, "silent": silent, "criteria": crit}

    items = [Labelled("t", "gold", "", "migrated", (), False),
             Labelled("t", "alt-a", "", "migrated", (), False),
             Labelled("t", "broken-x", "", "config_drift", ("numerics",), True)]
    verdicts = {("t", "gold"): verdict(None, False), ("t", "alt-a"): verdict("numerics_drift"),
                ("t", "broken-x"): verdict("config_drift")}
    table = confusion_table(items, verdicts)
    assert "numerics_drift*" in table and table.splitlines()[2].split()[:2] == ["migrated", "1"]
    wrong = mismatches(items, verdicts)
    assert len(wrong) == 1 and "alt-a" in wrong[0]


INIT_SCRIPT = """
import sys, torch, torch.nn as nn
torch.manual_seed(0)
data = torch.randn(64, 4)
mode = sys.argv[1]
if mode in ("shuffled", "gold", "other"):  # gold, other: two draws of an unseeded generator
    data = data[torch.randperm(64, generator=torch.Generator().manual_seed(len(mode)))]
model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.BatchNorm1d(8), nn.Linear(8, 1))
if mode == "rng":  # another use of the RNG between initialisation and training: other dropout masks
    torch.randn(100)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    loss = model(data[i * 16:(i + 1) * 16]).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
"""


def _init_run(tmp_path: Path, mode: str) -> Trace:
    work = tmp_path / f"init-{mode}"
    work.mkdir()
    (work / "train.py").write_text(INIT_SCRIPT)
    assert run_probed(["train.py", mode], work, work / "out", clean_env(), 120).exit_code == 0
    return Trace.load(work / "out" / "trace.jsonl")


def test_init_signals_do_not_depend_on_rng_state_but_see_the_data(tmp_path: Path) -> None:
    ref = _init_run(tmp_path, "plain")
    assert ref.init and ref.init["input_shape"] == [16, 4] and "input_wsum" in ref.init
    # other dropout masks move the step-0 loss, not the first batch's fingerprint
    failures = _numerics_failures(ref, _init_run(tmp_path, "rng"))
    assert [f["text"] for f in failures if "first batch" in f["text"]] == []
    assert any("step-0 loss" in f["text"] for f in failures)
    # another first batch (order, pipeline) is a changed workload, whatever the RNG
    shuffled = [f for f in _numerics_failures(ref, _init_run(tmp_path, "shuffled"))
                if "first batch" in f["text"]]
    assert shuffled and shuffled[0]["category"] == "workload_changed", shuffled
    # where the gold's own first batch differs (data from an unseeded generator) the signal is noise
    other = _init_run(tmp_path, "other")
    lines = [e for e in _numerics_evidence(ref, other, gold=_init_run(tmp_path, "gold"))
             if "first batch" in e["text"]]
    assert len(lines) == 1 and lines[0]["ok"] and "not reproducible" in lines[0]["text"], lines


TIED_SCRIPT = """
import sys, torch, torch.nn as nn
torch.manual_seed(0)
emb, head = nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)
if sys.argv[1] == "tied":
    head.weight = emb.weight
model = nn.Sequential(emb, head)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(2):
    loss = model(torch.arange(8) % 10).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
"""


def test_untied_weights_are_a_changed_workload(tmp_path: Path) -> None:
    traces = {}
    for mode in ("tied", "untied"):
        work = tmp_path / mode
        work.mkdir()
        (work / "train.py").write_text(TIED_SCRIPT)
        assert run_probed(["train.py", mode], work, work / "out", clean_env(), 120).exit_code == 0
        traces[mode] = Trace.load(work / "out" / "trace.jsonl")
    assert traces["tied"].model and traces["tied"].model["shared_params"] == [[2, [10, 4]]]
    failures = _numerics_failures(traces["tied"], traces["untied"])
    failed = [f for f in failures if "tied" in f["text"]]
    assert failed and failed[0]["category"] == "workload_changed", failed
    # the group's tensor count and the dtype count follow from the lost tie: named by it (issue 23)
    named = min((f["category"] for f in failures), key=criteria.CATEGORIES.index)
    assert named == "workload_changed" and "config_drift" not in {f["category"] for f in failures}, failures


def _with_step0(run: RunRecord, loss: float, first_input: float) -> RunRecord:
    out = copy.deepcopy(run)
    out.trace.steps[0].update(loss=loss, grad_norm=1.0)
    out.trace.init = {"input_shape": [8, 4], "input_sum": first_input, "input_sumsq": 4.0,
                      "input_wsum": 0.5, "input_wsumsq": 1.0}
    return out


def _step0_loss_ok(verdict: dict) -> bool:
    lines = [e for e in verdict["criteria"]["numerics"]["evidence"] if e["text"].startswith("step-0 loss")]
    return lines[0]["ok"]


def test_step0_is_judged_by_the_seed_spread_where_the_gold_trains_on_another_first_batch() -> None:
    """An RL rollout samples its first batch from the device's generator: the gold's step-0 loss
    then differs from the reference's as much as another seed's does (cleanrl: 18.2 vs 23.3, seeds
    17.7 and 15.4). Each seed is one more draw, so calibration's rule applies: the limit is RNG_Z
    times the largest seed's move (0.339 here). A correct migration's own draw may land beyond the
    largest of two seeds (ddim's device loader: 1.32 times it), which the bare spread failed; a loss
    far outside it still fails, and where the gold trains on the reference's batch the tolerance holds."""
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    base = _run(_steps(40))
    refs = [_with_step0(base, 23.3, 1.0), _with_step0(base, 17.7, 3.0), _with_step0(base, 15.4, 5.0)]
    gold_other_batch = _with_step0(base, 18.2, 2.0)
    assert _step0_loss_ok(grade(spec, target, refs, gold_other_batch, _with_step0(base, 18.4, 2.5)))
    beyond_seeds = 23.3 * (1 + 1.5 * (23.3 - 15.4) / 23.3)
    assert _step0_loss_ok(grade(spec, target, refs, gold_other_batch, _with_step0(base, beyond_seeds, 2.5)))
    limit = step0.RNG_Z * (23.3 - 15.4) / 23.3
    assert not _step0_loss_ok(grade(spec, target, refs, gold_other_batch,
                                    _with_step0(base, 23.3 * (1 + 1.1 * limit), 2.5)))
    gold_same_batch = _with_step0(base, 23.3, 1.0)
    assert not _step0_loss_ok(grade(spec, target, refs, gold_same_batch, _with_step0(base, 18.4, 1.0)))


def test_step0_on_another_batch_is_judged_by_the_start_draws_where_the_references_hold_them() -> None:
    """References built with calibration's start draws (other first batches at the reference's
    initial weights) judge the other-batch step 0 by those draws, not by the seeds, whose initial
    weights move too: here the seeds allow 4 x 0.339, the start draws 4 x 0.05."""
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    base = _run(_steps(40))
    refs = [_with_step0(base, 23.3, 1.0), _with_step0(base, 17.7, 3.0), _with_step0(base, 15.4, 5.0)]
    gold = _with_step0(base, 18.2, 2.0)
    cand = _with_step0(base, 23.3 * 1.3, 2.5)  # 30% off: inside 1.36, outside 0.2
    assert _step0_loss_ok(grade(spec, target, refs, gold, cand))
    starts = {f"start-{k}": _with_step0(base, 23.3 * (1 + m), 2.0).trace
              for k, m in enumerate((0.05, -0.03, 0.01, 0.02), 1)}
    verdict = grade(spec, target, refs, gold, cand, starts)
    assert not _step0_loss_ok(verdict)
    line = next(e for e in verdict["criteria"]["numerics"]["evidence"] if e["text"].startswith("step-0 loss"))
    assert line["limit"] == pytest.approx(step0.RNG_Z * 0.05) and "4 draws" in line["text"]
    assert _step0_loss_ok(grade(spec, target, refs, gold, _with_step0(base, 23.3 * 1.1, 2.5), starts))


def _with_syncs(run: RunRecord, per_step: float) -> RunRecord:
    steps = [{**s, "counters": {"compiles": 3, "host_reads": 0, "syncs": int(per_step * i)}}
             for i, s in enumerate(run.trace.steps)]
    return RunRecord(process=run.process, trace=Trace(start=run.trace.start, end=run.trace.end,
                     optimizer=run.trace.optimizer, steps=steps, seeds=run.trace.seeds), goal=run.goal)


def _sync_line(verdict: dict) -> dict:
    return next(e for e in verdict["criteria"]["performance"]["evidence"] if "XLA syncs" in e["text"])


def test_unsynced_lazy_graph_is_slow_unless_the_gold_never_syncs_either() -> None:
    """Fewer than one XLA sync in two steps grows the lazy graph: `slow`. A trusted gold that
    never syncs (dlg: LBFGS on the host, every closure's gradients read back) asks no syncs."""
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    syncing = _with_syncs(_run(_steps(40), cpu_s=8.0), 1.0)
    cand = _with_syncs(_run(_steps(40, jitter=1e-3), cpu_s=8.0), 0.0)
    line = _sync_line(grade(spec, target, [syncing], syncing, cand))
    assert not line["ok"] and "the lazy graph grows" in line["text"] and "gold 1.00" in line["text"]
    unsynced_gold = _with_syncs(_run(_steps(40), cpu_s=8.0), 0.0)
    line = _sync_line(grade(spec, target, [syncing], unsynced_gold, cand))
    assert line["ok"] and "gold 0.00" in line["text"], line


def _on(run: RunRecord, params: list[str], inputs: list[str]) -> RunRecord:
    trace = copy.deepcopy(run.trace)
    assert trace.optimizer is not None
    trace.optimizer["param_devices"] = params
    for s in trace.steps:
        s["input_devices"] = inputs
    return RunRecord(process=run.process, trace=trace, goal=run.goal)


def _lines(verdict: dict, criterion: str, words: str) -> list[dict]:
    return [e for e in verdict["criteria"][criterion]["evidence"] if words in e["text"]]


def test_optimised_tensors_stay_on_the_host_only_where_the_gold_keeps_them_there() -> None:
    """dlg's gold keeps LBFGS and its dummy image on the host (the network runs on the device):
    a candidate may do the same there, nowhere else; a run whose model inputs are on the host too
    is on other hardware, and its time is not compared."""
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    ref = _run(_steps(40), cpu_s=8.0)
    host_gold = _on(ref, ["cpu"], ["xla:0"])
    cand = _on(_run(_steps(40, jitter=1e-3), cpu_s=8.0), ["cpu"], ["xla:0"])
    beside = grade(spec, target, [ref], host_gold, cand)
    line = _lines(beside, "hardware", "parameters on")[0]
    assert line["ok"] and "the gold keeps its optimised tensors on ['cpu']" in line["text"], line
    assert _lines(beside, "performance", "median step time")  # same hardware: time compared
    alone = grade(spec, target, [ref], ref, cand)  # the gold's parameters are on the device
    assert not _lines(alone, "hardware", "parameters on")[0]["ok"]
    assert alone["category"] == "wrong_device"
    on_host = grade(spec, target, [ref], host_gold, _on(cand, ["cpu"], ["cpu"]))
    assert on_host["category"] == "wrong_device"
    assert _lines(on_host, "performance", "not compared with gold: parameters or model inputs on ['cpu']")


CLOSURE_ATTACK = """
import torch, torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 5), nn.Sigmoid(), nn.Linear(5, 3))  # fixed: only its input is optimised
target = [g.detach() for g in torch.autograd.grad(net(torch.randn(1, 6)).pow(2).sum(), net.parameters())]
dummy = torch.randn(1, 6).requires_grad_(True)
opt = torch.optim.LBFGS([dummy], max_iter=4)
for step in range(3):
    calls = []
    def closure():
        opt.zero_grad()
        grads = torch.autograd.grad(net(dummy).pow(2).sum(), net.parameters(), create_graph=True)
        diff = sum(((g - t) ** 2).sum() for g, t in zip(grads, target))
        diff.backward()
        calls.append(float(diff.detach()))
        return diff
    opt.step(closure)
    print("FIRST", repr(calls[0]), "CALLS", len(calls), flush=True)
    closure()  # an evaluation outside the step (the project logs its loss): not the next step's
"""


def test_closure_steps_record_their_first_evaluation_and_the_network_that_owns_no_optimised_tensor(
        tmp_path: Path) -> None:
    """An LBFGS step evaluates its closure as often as its line search needs: the step's loss and
    batch are its first evaluation. The optimised tensor (a fixed network's input) belongs to no
    module: the probe observes the network that exists, for its inputs and structure."""
    work = tmp_path / "attack"
    work.mkdir()
    (work / "attack.py").write_text(CLOSURE_ATTACK)
    res = run_probed(["attack.py"], work, work / "out", clean_env(), 120)
    assert res.exit_code == 0, (work / "out" / "stderr.log").read_text()
    printed = [line.split() for line in (work / "out" / "stdout.log").read_text().splitlines()
               if line.startswith("FIRST")]
    trace = Trace.load(work / "out" / "trace.jsonl")
    assert len(trace.applied) == 3
    for step, words in zip(trace.applied, printed):
        assert step["loss"] == pytest.approx(float(words[1]), rel=1e-6)
        assert step["closure_calls"] == int(words[3]) > 1 and step["micro_batches"] == 1
        assert step["batch_size"] == [1] and step["input_devices"] == ["cpu"]
    assert trace.model and len(trace.model["leaf_modules"]) == 3


def _with_reads(run: RunRecord, reads_in_step: Callable[[int], int]) -> RunRecord:
    """`run` with cumulative host-read counters: `reads_in_step(i)` reads in optimizer step i."""
    steps, total = [], 0
    for i, s in enumerate(run.trace.steps):
        total += reads_in_step(i)
        steps.append({**s, "counters": {"compiles": 3, "host_reads": total, "syncs": i + 1}})
    trace = copy.deepcopy(run.trace)
    trace.steps = steps
    return RunRecord(process=run.process, trace=trace, goal=run.goal)


def _host_line(verdict: dict) -> dict:
    return next(e for e in verdict["criteria"]["performance"]["evidence"] if "host reads" in e["text"])


def _checkpointing(tensors: int) -> Callable[[int], int]:
    """A loss read every fifth step and a `torch.save` of `tensors` device tensors every tenth."""
    return lambda i: (1 if i % 5 == 0 else 0) + (tensors if i % 10 == 9 else 0)


def test_a_read_every_step_is_host_sync_beside_a_gold_whose_checkpoints_read_many_tensors() -> None:
    """A gold that saves its checkpoints with `torch.save` reads every tensor in those steps (2.95
    reads per step on average in nanoGPT's). A migration that reads `.item()` every step and saves
    with `xm.save` (one transfer) averages less, and still reads every step: `host_sync`."""
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    gold = _with_reads(_run(_steps(41)), _checkpointing(50))
    cand = _with_reads(_run(_steps(41)), lambda i: 1 + (1 if i % 10 == 9 else 0))
    line = _host_line(grade(spec, target, [gold], gold, cand))
    assert not line["ok"] and "host reads in 100% of 38 steps" in line["text"], line  # 3 warm-up
    assert _host_line(grade(spec, target, [gold], gold, gold))["ok"]


def test_reads_that_only_moved_with_the_workload_are_not_host_sync() -> None:
    """Symptoms are not causes: two more tensors in each checkpoint (weight tying lost) or one
    evaluation over half the steps leave the steady state as the gold's."""
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    gold = _with_reads(_run(_steps(41)), _checkpointing(50))
    untied = _with_reads(_run(_steps(41)), _checkpointing(52))
    assert _host_line(grade(spec, target, [gold], gold, untied))["ok"]
    evaluating = _with_reads(_run(_steps(41)), lambda i: 30 if i == 20 else 0)
    half = _with_reads(_run(_steps(21)), lambda i: 30 if i == 10 else 0)
    assert _host_line(grade(spec, target, [evaluating], evaluating, half))["ok"]


def test_extra_reads_in_every_step_are_host_sync_where_the_gold_reads_every_step_too() -> None:
    spec, target = find_task("cifar_amp"), get_target("xla-cpu")
    gold = _with_reads(_run(_steps(41)), lambda i: 1)
    cand = _with_reads(_run(_steps(41)), lambda i: 3)
    line = _host_line(grade(spec, target, [gold], gold, cand))
    assert not line["ok"] and "3 in a typical step" in line["text"] and "gold 100%, 1;" in line["text"]


def test_a_changed_configuration_is_named_before_the_reads_it_moved() -> None:
    from gpu2tpu.judge.criteria import CriterionResult
    from gpu2tpu.judge.verdict import combine

    results = {n: CriterionResult(n) for n in CRITERION_NAMES}
    results["performance"].check(False, "host reads in 60% of 20 steps", "host_sync")
    results["numerics"].check(False, "21 optimizer steps (reference 41)", "workload_changed")
    assert combine(results, exited_zero=True)["category"] == "workload_changed"
