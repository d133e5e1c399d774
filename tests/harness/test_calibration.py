"""Calibrated step-0 tolerances (record/calibration.py): the probe's calibration runs on a real
model with dropout, and the limits the criteria draw from them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpu2tpu.judge import criteria, step0
from gpu2tpu.judge.step0 import step0_limit
from gpu2tpu.record import calibration
from gpu2tpu.record.calibration import CALIBRATE_ENV
from gpu2tpu.record.probe import CALIBRATE_ENV as PROBE_CALIBRATE_ENV
from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.targets import get_target
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.sandbox.process import clean_env
from gpu2tpu.tasks.finder import find_task

DROPOUT = textwrap.dedent("""
    import sys, torch
    torch.manual_seed(0)
    p = float(sys.argv[1])
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Dropout(p),
                                torch.nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(128, 32), torch.randint(0, 4, (128,))
    for _ in range(5):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""")


def _run(tmp_path: Path, name: str, mode: str, p: float) -> Trace:
    return _run_script(tmp_path, name, DROPOUT, mode, str(p))


def test_the_probe_and_the_harness_name_one_switch() -> None:
    assert CALIBRATE_ENV == PROBE_CALIBRATE_ENV


def test_calibration_runs_move_dropout_and_stop_after_the_first_step(tmp_path: Path) -> None:
    plain = _run(tmp_path, "plain", "", 0.3)
    draws = [_run(tmp_path, f"rng{k}", f"rng:{k}", 0.3) for k in (1, 2)]
    bf16 = _run(tmp_path, "bf16", "bf16", 0.3)
    assert len(plain.applied) == 5
    assert all(len(t.applied) == 1 for t in (*draws, bf16))  # step 0 only
    first = plain.applied[0]["loss"]
    losses = [t.applied[0]["loss"] for t in draws]
    assert all(v != first for v in losses) and losses[0] != losses[1]  # other dropout masks
    assert {"device_type": "cpu", "enabled": True, "dtype": "bfloat16"} in \
        [{k: a[k] for k in ("device_type", "enabled", "dtype")} for a in bf16.autocast]
    limit = step0_limit("loss", 0.01, first, {"rng-1": draws[0], "rng-2": draws[1], "bf16": bf16})
    assert limit.rtol > 0.01 and "2 draws" in limit.text and "bf16" in limit.text
    # without dropout, the generator moves nothing: the floor stands
    still = _run(tmp_path, "still", "", 0.0)
    moved = _run(tmp_path, "still-rng", "rng:3", 0.0)
    assert moved.applied[0]["loss"] == pytest.approx(still.applied[0]["loss"], rel=1e-6)
    assert step0_limit("loss", 0.01, still.applied[0]["loss"], {"rng-3": moved}).rtol == 0.01


def _trace(loss: float, grad_norm: float = 1.0, steps: int = 40) -> Trace:
    return Trace(optimizer={"class": "SGD", "groups": [{"lr": 0.1}], "param_count": 10,
                            "param_shapes_sha": "x", "param_devices": ["xla:0"]},
                 steps=[{"step": i, "loss": loss - 0.01 * i, "grad_norm": grad_norm, "lr": [0.1],
                         "clip": [], "micro_batches": 1, "batch_size": [8],
                         "input_devices": ["xla:0"], "loss_device": "xla:0", "wall_s": 0.01}
                        for i in range(steps)])


def test_step0_limit_is_the_floor_without_runs_and_ignores_failed_ones() -> None:
    assert step0_limit("loss", 0.01, 2.0, {}).rtol == 0.01
    failed = Trace()  # a calibration run that recorded no step
    limit = step0_limit("loss", 0.01, 2.0, {"rng-1": failed, "rng-2": _trace(2.02, steps=1)})
    assert limit.rtol == pytest.approx(step0.RNG_Z * 0.01)
    assert "1 draws" in limit.text


def test_a_candidate_within_the_calibrated_limit_passes_step0_and_one_beyond_fails() -> None:
    spec = find_task("cifar_amp")
    ref = RunRecord(process={"exit_code": 0}, trace=_trace(2.0), goal={"value": 0.5})
    runs = {f"rng-{k}": _trace(2.0 + 0.02 * (-1) ** k, steps=1) for k in range(1, 5)}

    def step0(loss: float, calibrated: bool) -> dict:
        cand = RunRecord(process={"exit_code": 0}, trace=_trace(loss), goal={"value": 0.5})
        res = criteria.numerics(criteria.Inputs(spec, get_target("xla-cpu"), [ref], ref, cand,
                                                runs if calibrated else {}))
        return next(e for e in res.evidence if e.get("signal") == "step0_loss")

    assert not step0(2.05, calibrated=False)["ok"]  # 2.5% against the 1% floor
    line = step0(2.05, calibrated=True)
    assert line["ok"] and "calibrated" in line["text"], line  # within 4 x 1%
    assert not step0(2.1, calibrated=True)["ok"]  # 5% is beyond it


def test_a_first_draw_that_moves_nothing_ends_the_draws() -> None:
    reference = _trace(2.0, grad_norm=1.5)
    assert not calibration.moves_step0(reference, _trace(2.0 * (1 + 1e-8), grad_norm=1.5, steps=1))
    assert calibration.moves_step0(reference, _trace(2.0, grad_norm=1.51, steps=1))
    assert calibration.moves_step0(reference, Trace())  # a failed draw: keep drawing
    assert [n for n, _ in calibration.variants(find_task("cifar_amp"))][0] == calibration.FIRST_DRAW


NOISE = textwrap.dedent("""
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(128, 32)
    for _ in range(3):  # the noise is drawn in the loop, before the forward (as ddim's)
        noisy = x + torch.randn_like(x)
        loss = model(noisy).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""")


def _run_script(tmp_path: Path, name: str, script: str, mode: str, *args: str) -> Trace:
    """`script` run under the probe (in calibration `mode` where one is given); its trace."""
    work = tmp_path / name / "project"
    work.mkdir(parents=True)
    (work / "train.py").write_text(script)
    env = clean_env()
    if mode:
        env[CALIBRATE_ENV] = mode
    res = run_probed(["train.py", *args], work, tmp_path / name / "out", env, 120)
    assert res.exit_code == 0, (tmp_path / name / "out" / "stderr.log").read_text()
    return Trace.load(tmp_path / name / "out" / "trace.jsonl")


def test_start_draws_move_noise_drawn_before_the_forward_at_the_same_init(tmp_path: Path) -> None:
    """Noise drawn in the loop before the forward is out of reach of a draw at the first forward
    (rng:K) but not of one where training starts (start:K, as the first optimizer is built): step 0
    then trains on another draw at the same initial weights."""
    plain = _run_script(tmp_path, "plain", NOISE, "")
    at_forward = _run_script(tmp_path, "rng", NOISE, "rng:1")
    starts = [_run_script(tmp_path, f"start{k}", NOISE, f"start:{k}") for k in (1, 2)]
    first = plain.applied[0]["loss"]
    assert at_forward.applied[0]["loss"] == pytest.approx(first, rel=1e-6)
    moved = [t.applied[0]["loss"] for t in starts]
    assert all(v != pytest.approx(first, rel=1e-4) for v in moved) and moved[0] != moved[1]
    assert all(len(t.applied) == 1 for t in starts)
    runs = {"start-1": starts[0], "start-2": starts[1]}
    limit = step0.other_batch_limit("loss", first, runs)
    assert limit is not None and "2 draws" in limit.text
    biggest = max(abs(v - first) / abs(first) for v in moved)
    assert limit.rtol == pytest.approx(step0.RNG_Z * biggest)
    assert step0.other_batch_limit("loss", first, {"rng-1": at_forward}) is None
    # the start draws never widen the ordinary (same first batch) limit
    assert step0_limit("loss", 0.01, first, runs).rtol == 0.01


def test_unknown_calibration_modes_are_refused() -> None:
    from gpu2tpu.record.probe_calibration import install_calibration

    for mode in ("start", "start:x", "rng:", "fp16"):
        with pytest.raises(ValueError, match="unknown calibration mode"):
            install_calibration(None, mode)  # type: ignore[arg-type]


def test_start_draws_that_moved_nothing_leave_the_seed_rule() -> None:
    """A project whose optimizer is not a torch.optim.Optimizer is never advanced: its start draws
    equal the reference, measure nothing, and the seeds' rule stands."""
    same = _trace(2.0, grad_norm=1.5, steps=1)
    assert step0.other_batch_limit("loss", 2.0, {"start-1": same}) is None
