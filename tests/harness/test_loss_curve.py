"""The loss curve's two lines (harness/loss_curve.py) on synthetic traces: a task whose reference
draws its dropout masks differently from the target, so the gold drifts far from the reference and
the reference line's band is wide."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

from gpu2tpu.harness import criteria
from gpu2tpu.harness.calibration import KICK
from gpu2tpu.harness.loss_curve import SAME_DRAWS_RTOL, first_other_draw
from gpu2tpu.harness.runner import run_probed
from gpu2tpu.harness.targets import get_target
from gpu2tpu.harness.trace import RunRecord, Trace
from gpu2tpu.sandbox.process import clean_env
from gpu2tpu.tasks.finder import find_task

STEPS = 40


def _record(losses: list[float], draws: list[str | None] | None = None,
            autocast: list[dict] | None = None) -> RunRecord:
    draws = draws if draws is not None else [f"g{i}" for i in range(len(losses))]
    steps = [{"step": i, "loss": v, "grad_norm": 1.0, "lr": [0.1], "clip": [], "micro_batches": 1,
              "batch_size": [8], "input_devices": ["xla:0"], "loss_device": "xla:0", "wall_s": 0.01,
              "random_state": h} for i, (v, h) in enumerate(zip(losses, draws))]
    trace = Trace(optimizer={"class": "SGD", "groups": [{"lr": 0.1}], "param_count": 10,
                             "param_shapes_sha": "x", "param_devices": ["xla:0"]}, steps=steps,
                  autocast=autocast or [])
    return RunRecord(process={"exit_code": 0, "wall_s": 1.0}, trace=trace, goal={"value": 0.5})


def _curve(offset: float, wiggle: float = 0.0) -> list[float]:
    return [2.0 - 0.02 * t + offset + wiggle * math.sin(t) for t in range(STEPS)]


GOLD = _curve(0.0, wiggle=0.08)  # the target's own dropout masks: far from the reference's curve
REFS = [_record(_curve(0.0)), _record(_curve(0.03)), _record(_curve(-0.03))]
STEADY = _record([v * (1 + 1e-5) for v in _curve(0.0)])  # a nudge the training does not amplify
# a chaotic training: the nudge grows fivefold per step, to 0.3 of the loss by step 9
CHAOTIC = _record([v * (1 + min(0.3, 1e-6 * 5 ** t) * (-1) ** t) for t, v in enumerate(_curve(0.0))])


def _lines(cand: RunRecord, kick: RunRecord | None = STEADY) -> list[dict]:
    runs = {KICK: kick.trace} if kick is not None else {}
    inputs = criteria.Inputs(find_task("tiedlm"), get_target("xla-cpu"), REFS, _record(GOLD), cand, runs)
    return [e for e in criteria.numerics(inputs).evidence if "loss curve" in e["text"]]


def test_same_draws_catch_what_the_reference_band_holds() -> None:
    warmup_changed = _record([g - 0.01 for g in GOLD])  # the gold's draws, 0.5% lower throughout
    reference_line, gold_line = _lines(warmup_changed)
    assert reference_line["ok"], reference_line  # inside the wide band: the first line cannot see it
    assert not gold_line["ok"] and gold_line["category"] == "numerics_drift", gold_line
    assert gold_line["signal"] == "gold_curve" and gold_line["value"] > gold_line["limit"]


def test_the_gold_curve_and_floating_point_order_pass() -> None:
    for losses in (GOLD, [g * (1 + SAME_DRAWS_RTOL / 4) for g in GOLD]):
        assert all(e["ok"] for e in _lines(_record(losses))), losses


def test_a_chaotic_training_widens_the_later_steps_only() -> None:
    """Where the kick run shows floating-point differences growing to 0.3 of the loss, a candidate
    whose reordered sums grow as fast passes, and a change visible from step 1 still fails."""
    reordered = _record([g * (1 + min(0.02, 1e-7 * 5 ** t)) for t, g in enumerate(GOLD)])
    assert all(e["ok"] for e in _lines(reordered, CHAOTIC))
    assert not _lines(reordered, STEADY)[1]["ok"]  # the same candidate where nothing amplifies
    clipped = _record([g if t == 0 else g * 1.01 for t, g in enumerate(GOLD)])
    gold_line = _lines(clipped, CHAOTIC)[1]
    assert not gold_line["ok"] and "at step 1:" in gold_line["text"], gold_line


def test_without_a_kick_run_the_gold_line_is_not_judged() -> None:
    gold_line = _lines(_record([g - 0.01 for g in GOLD]), kick=None)[1]
    assert gold_line["ok"] and "no complete kick run" in gold_line["text"]


def test_other_draws_are_judged_by_the_reference_line_only() -> None:
    loader = _record([g - 0.01 for g in GOLD], draws=[f"g{i}" if i < 3 else f"l{i}" for i in range(STEPS)])
    reference_line, gold_line = _lines(loader)
    assert reference_line["ok"] and gold_line["ok"]
    assert "not judged" in gold_line["text"] and "after step 3" in gold_line["text"]


def test_a_trace_without_hashes_gains_nothing() -> None:
    """A forged or old trace without hashes is judged as other draws: the reference line alone,
    which is what every candidate faced before the gold line; an off curve still fails it."""
    no_hash = _record(GOLD, draws=[None] * STEPS)
    assert first_other_draw(_record(GOLD).trace, no_hash.trace, STEPS) == 0
    far = _record([g + 0.5 for g in GOLD], draws=[None] * STEPS)
    reference_line, _ = _lines(far)
    assert not reference_line["ok"]


def test_another_precision_is_not_judged_on_the_gold_line() -> None:
    bf16 = _record([g - 0.01 for g in GOLD], autocast=[{"device_type": "xla", "dtype": "bfloat16",
                                                          "enabled": True}])
    gold_line = _lines(bf16)[1]
    assert gold_line["ok"] and "autocast xla:bfloat16" in gold_line["text"]


DRAWS_SCRIPT = textwrap.dedent("""
    import sys, numpy, torch, torch_xla
    torch.manual_seed(0)
    numpy.random.seed(0)
    device = torch_xla.device()
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5),
                                torch.nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(16, 4).to(device)
        if sys.argv[1] == "extra" and step == 1:
            numpy.random.rand()  # one more host draw after step 0
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch_xla.sync()
""")


def _draws(tmp_path: Path, mode: str, name: str) -> list[str]:
    work = tmp_path / name
    work.mkdir()
    (work / "train.py").write_text(DRAWS_SCRIPT)
    res = run_probed(["train.py", mode], work, work / "out", clean_env({"PJRT_DEVICE": "CPU"}), 120)
    assert res.exit_code == 0, (work / "out" / "stderr.log").read_text()[-2000:]
    return [s["random_state"] for s in Trace.load(work / "out" / "trace.jsonl").applied]


def test_the_probe_hashes_the_same_draws_alike_across_processes(tmp_path: Path) -> None:
    first, again, extra = (_draws(tmp_path, m, n) for m, n in
                           (("same", "a"), ("same", "b"), ("extra", "c")))
    assert len(first) == 3 and len(set(first)) == 3  # every step draws (batch and dropout)
    assert again == first  # another process, the same draws: Python's hash(None) varies, the hash not
    assert extra[0] == first[0] and extra[1] != first[1]
