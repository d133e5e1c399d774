"""What the probe records as a training forward's inputs when they are not plain tensor arguments
(a dict of tensors, a list of graph objects), and the loss of a step that shares another's backward
(record/probe_inputs.py). Tiny real models run through the probe on the CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu2tpu.judge import criteria
from gpu2tpu.record.runner import run_probed
from gpu2tpu.record.targets import get_target
from gpu2tpu.record.trace import RunRecord, Trace
from gpu2tpu.sandbox.process import clean_env
from gpu2tpu.tasks.finder import find_task

PROBED = """
import sys
import torch, torch.nn as nn
from torch.nn.modules.module import _global_forward_pre_hooks

torch.manual_seed(0)
mode = sys.argv[1]


class DictModel(nn.Module):  # CSDI: model(batch), batch a dict of tensors
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, batch):
        return self.lin(batch["observed"][0] * batch["mask"]).pow(2).mean()


class Graph:  # powerful-gnns: plain objects whose attributes hold tensors
    def __init__(self, nodes):
        self.features = torch.randn(nodes, 4)


class GraphModel(nn.Module):  # moves its graphs' tensors itself, inside forward
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 1))

    def forward(self, graphs):
        x = torch.cat([g.features for g in graphs]).to("cpu")
        return self.mlp(x * 2).pow(2).mean()


class MixedModel(nn.Module):  # a top-level tensor after a list: the tensor, as before
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, extras, x):
        return self.lin(x + extras[0].sum()).pow(2).mean()


if mode == "dict":
    model = DictModel()
    batches = [{"observed": (torch.randn(6, 4), "name"), "mask": torch.ones(6, 4)} for _ in range(3)]
    run = lambda b: model(b)
elif mode == "graphs":
    model = GraphModel()
    batches = [[Graph(3), Graph(5)] for _ in range(3)]
    run = lambda b: model(b)
else:
    model = MixedModel()
    batches = [([torch.randn(5, 4)], torch.randn(7, 4)) for _ in range(3)]
    run = lambda b: model(*b)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for b in batches:
    opt.zero_grad()
    run(b).backward()
    opt.step()
    assert not _global_forward_pre_hooks, "the probe left a global forward pre-hook registered"
with torch.no_grad():
    run(batches[0])
    assert not _global_forward_pre_hooks, "an evaluation forward armed the probe's hook"
"""

MOVES_ITS_BATCH = """
import torch, torch.nn as nn, torch_xla

device = torch_xla.device()
torch.manual_seed(0)


class DictModel(nn.Module):  # CSDI: the batch stays on the host, forward moves it to the device
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, batch):
        return self.lin(batch["observed"].to(device)).pow(2).mean()


model = DictModel().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    model({"observed": torch.randn(6, 4)}).backward()
    opt.step()
    torch_xla.sync()
"""

SHARED = """
import sys
import torch, torch.nn as nn

torch.manual_seed(0)
mode = sys.argv[1]
enc, gen = nn.Linear(4, 4), nn.Linear(4, 1)
opt_e = torch.optim.SGD(enc.parameters(), lr=0.1)
opt_g = torch.optim.Adam(gen.parameters(), lr=0.01)
if mode == "step_first":  # an optimizer step before any backward of the run
    opt_g.step()
if mode == "own":  # each optimizer after a backward of its own: nothing shared
    for _ in range(2):
        for opt, net in ((opt_e, enc), (opt_g, gen)):
            opt.zero_grad(); net(torch.randn(8, 4)).sum().backward(); opt.step()
    sys.exit(0)
if mode == "grad_only":  # one backward, then gradients from autograd.grad: nothing to share
    opt_g.zero_grad(); gen(torch.randn(8, 4)).sum().backward(); opt_g.step()
    for _ in range(2):
        out = gen(torch.randn(8, 4)).pow(2).mean()
        for p, g in zip(gen.parameters(), torch.autograd.grad(out, list(gen.parameters()))):
            p.grad = g
        opt_g.step()
    sys.exit(0)
for _ in range(3):
    x = torch.randn(8, 4)
    opt_e.zero_grad(); opt_g.zero_grad()
    loss = gen(enc(x)).pow(2).mean()
    loss.backward()
    (gen(enc(x).detach()).abs().mean()).backward()  # two micro-batches: two backwards, one step
    opt_e.step()
    opt_g.step()  # BicycleGAN: a second optimizer after the same backward
"""


def _probe(tmp_path: Path, script: str, mode: str, env: dict[str, str] | None = None) -> Trace:
    work = tmp_path / mode
    work.mkdir()
    (work / "train.py").write_text(script)
    res = run_probed(["train.py", mode], work, work / "out", clean_env(env), 120)
    assert res.exit_code == 0, (work / "out" / "stderr.log").read_text()
    return Trace.load(work / "out" / "trace.jsonl")


def _record(trace: Trace) -> RunRecord:
    return RunRecord(process={"exit_code": 0, "wall_s": 1.0}, trace=trace, goal={})


def _evidence(trace: Trace, criterion: str) -> list[dict[str, Any]]:
    """The evidence criterion `criterion` gives this trace graded against itself (on xla-cpu, so
    the hardware lines name what was recorded and fail for being on the CPU)."""
    inputs = criteria.Inputs(find_task("cifar_amp"), get_target("xla-cpu"), [_record(trace)],
                             _record(trace), _record(trace))
    return getattr(criteria, criterion)(inputs).evidence


def test_a_dict_of_tensors_is_the_forwards_input_and_a_top_level_tensor_still_comes_first(
        tmp_path: Path) -> None:
    trace = _probe(tmp_path, PROBED, "dict")
    assert [s["input_devices"] for s in trace.applied] == [["cpu"]] * 3
    assert [s["batch_size"] for s in trace.applied] == [[6]] * 3
    assert trace.init and trace.init["input_shape"] == [6, 4]  # the first tensor leaf
    assert trace.init["input_sumsq"] > 0
    texts = [e["text"] for e in _evidence(trace, "hardware")]
    assert "model inputs on ['cpu']" in texts, texts
    mixed = _probe(tmp_path, PROBED, "mixed")  # the top-level tensor, as before this change
    assert [s["batch_size"] for s in mixed.applied] == [[7]] * 3
    assert mixed.init and mixed.init["input_shape"] == [7, 4]


def test_a_batch_the_model_moves_itself_is_on_the_device_the_network_gets_it(tmp_path: Path) -> None:
    """The dict stays on the host and forward moves it: the inputs' device is where the first
    module inside the forward receives them; batch size and fingerprint are the dict's tensor's."""
    trace = _probe(tmp_path, MOVES_ITS_BATCH, "moves", {"PJRT_DEVICE": "CPU"})
    assert [s["input_devices"] for s in trace.applied] == [["xla:0"]] * 2
    assert [s["batch_size"] for s in trace.applied] == [[6]] * 2
    assert trace.init and trace.init["input_shape"] == [6, 4]
    assert trace.runtime["backend"] == "xla"
    # the fingerprint of the host tensor is read beside the device's losses: the probe reads the
    # device's values in one batch of its own, never one by one as the run's host reads
    assert trace.end and trace.end["counters"]["host_reads"] == 0, trace.end["counters"]


def test_a_forward_without_tensors_is_seen_through_its_first_submodule(tmp_path: Path) -> None:
    """The graphs' tensors reach the network inside forward: the first tensor the first submodule
    receives is the input (its device, fingerprint); the examples are the graphs handed over."""
    trace = _probe(tmp_path, PROBED, "graphs")
    assert [s["input_devices"] for s in trace.applied] == [["cpu"]] * 3
    assert [s["batch_size"] for s in trace.applied] == [[2]] * 3  # two graphs, not 8 nodes
    assert trace.init and trace.init["input_shape"] == [8, 4]  # x * 2 as the MLP received it
    assert trace.init["input_sum"] != 0


def test_a_second_optimizer_after_one_backward_shares_its_loss(tmp_path: Path) -> None:
    trace = _probe(tmp_path, SHARED, "shared")
    steps = trace.applied
    assert len(steps) == 6
    assert [s.get("shared_backward", False) for s in steps] == [False, True] * 3
    assert [s["micro_batches"] for s in steps] == [2, 0] * 3  # the shared step adds none
    for own, shared in zip(steps[::2], steps[1::2]):
        assert own["loss"] is not None and shared["loss"] == own["loss"]
        assert shared["loss_device"] == own["loss_device"] == "cpu"
        assert shared["grad_norm"] != own["grad_norm"]  # each step's own parameters
    assert "loss computed on ['cpu']" in [e["text"] for e in _evidence(trace, "hardware")]
    failed = [e["text"] for e in _evidence(trace, "numerics") if not e["ok"]]
    assert not failed, failed


def test_a_step_before_any_backward_has_no_loss_and_own_backwards_share_nothing(tmp_path: Path) -> None:
    steps = _probe(tmp_path, SHARED, "step_first").applied
    assert steps[0]["loss"] is None and "shared_backward" not in steps[0]
    assert steps[0]["micro_batches"] == 0
    assert [s.get("shared_backward", False) for s in steps[1:]] == [False, True] * 3
    own = _probe(tmp_path, SHARED, "own").applied
    assert len(own) == 4 and not any("shared_backward" in s for s in own)
    assert len({s["loss"] for s in own}) == 4
    grad_only = _probe(tmp_path, SHARED, "grad_only").applied
    assert [s["loss"] is None for s in grad_only] == [False, True, True]
    assert not any("shared_backward" in s for s in grad_only)
