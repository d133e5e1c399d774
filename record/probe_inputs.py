"""gpu2tpu probe, its inputs part: which tensor stands for a training forward's inputs, and the
loss of an optimizer step that shares another step's backward. Copied beside the probe as
gpu2tpu_probe_inputs.py in a run's workspace; `rec` is the probe's Recorder."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import torch
from torch.utils._pytree import tree_leaves  # in every torch 2.x, which the optimizer hooks need

if TYPE_CHECKING:
    from gpu2tpu.record.probe import Recorder


def top_level_tensor(args: tuple, kwargs: dict) -> torch.Tensor | None:
    """A forward's first tensor argument, positional then keyword, or None."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            return a
    return None


def nested_tensor(args: tuple, kwargs: dict) -> torch.Tensor | None:
    """The first tensor inside a forward's dict, list and tuple arguments (nested), or None."""
    containers = [a for a in (*args, *kwargs.values()) if isinstance(a, (dict, list, tuple))]
    if not containers:
        return None
    try:
        leaves = tree_leaves(containers)
    except RecursionError:  # a container that contains itself: no tensor found
        return None
    return next((x for x in leaves if isinstance(x, torch.Tensor)), None)


def examples_in(args: tuple, kwargs: dict) -> int | None:
    """The length of a forward's first list or tuple argument (its examples: graph objects, say),
    or None when it has none."""
    seq = next((a for a in (*args, *kwargs.values()) if isinstance(a, (list, tuple))), None)
    return len(seq) if seq else None


def fingerprint(x: torch.Tensor) -> dict:
    """RNG-independent signal of the first training forward, before it runs: a fingerprint of
    its input tensor (sum, sum of squares, position-weighted sum: the data pipeline and order),
    computed under no_grad from the input alone. Read with step 0's values (`init` event).
    No extra forward of the model: one under no_grad inside autocast leaves detached weight
    casts in autocast's cache, and the training forward then gets no gradients (measured)."""
    init: dict = {"input_shape": list(x.shape), "input_dtype": str(x.dtype).replace("torch.", ""),
                  "_tensors": []}
    try:
        with torch.no_grad():
            flat = x.detach().reshape(-1).float()
            weight = (torch.arange(flat.numel(), device=flat.device) % 13 - 6).float()
            init["_tensors"] = [flat.sum(), (flat * flat).sum(), (flat * weight).sum(),
                                (flat * flat * weight * weight).sum()]
    except Exception as exc:  # an input that cannot be summed: no init signal, the run goes on
        init["error"] = repr(exc)[:300]
    return init


class InnerInputs:
    """A root training forward handed no tensor argument of its own. Tensors inside its dicts,
    lists or tuples are its inputs (batch size, fingerprint), but where the network gets them is
    the device of the first tensor the first module inside it receives: a model that moves its
    batch to its device itself (CSDI's dict, powerful-gnns' graph objects) computes there. With no
    tensor inside its arguments at all, that first tensor is also its input, and its batch size
    the length of its first list or tuple argument (the graphs). A global forward pre-hook is
    registered only while such a forward waits for that tensor: models that take tensors pay
    nothing."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.roots: weakref.WeakSet = weakref.WeakSet()  # the modules the probe observes itself
        self.handle: Any = None
        self.pending: tuple = ()  # (the tensor found in its arguments or None, its examples)

    def arm(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        from torch.nn.modules.module import register_module_forward_pre_hook

        leaf = nested_tensor(args, kwargs)
        if leaf is not None:
            self.rec.record_input(leaf)
        self.pending = (leaf, None if leaf is not None else examples_in(args, kwargs))
        if self.handle is None:
            self.handle = register_module_forward_pre_hook(self._before)

    def disarm(self) -> None:
        if self.handle is not None:
            self.handle.remove()
            self.handle = None
        self.pending = ()

    def finish(self) -> None:
        """The root forward is over: a tensor no module inside it received counts where it is."""
        if self.pending and self.pending[0] is not None:
            self.rec.record_device(self.pending[0])
        self.disarm()

    def _before(self, module: torch.nn.Module, args: tuple) -> None:
        if not self.pending or not torch.is_grad_enabled():
            return
        if module in self.roots:  # an observed module records its own inputs
            self.disarm()
            return
        x = top_level_tensor(args, {})
        x = nested_tensor(args, {}) if x is None else x
        if x is None:
            return
        leaf, examples = self.pending
        self.disarm()
        if leaf is None:
            self.rec.record_input(x, examples)
        self.rec.record_device(x)


class SharedBackward:
    """The last backward's losses as a step recorded them: an optimizer step with no backward of
    its own since the previous step (two optimizers stepped after one backward) shares them. An
    optimizer that steps again without a new backward (gradients set by torch.autograd.grad) shares
    nothing: its step keeps no loss, as before."""

    def __init__(self) -> None:
        self.loss_device: str | None = None  # None until a step has recorded a backward
        self.loss: float | None = None  # its value, as the step's record read it
        self.stepped: set[int | None] = set()  # the optimizers that stepped since that backward

    def step_fields(self, cur: dict, optimizer: int | None) -> dict:
        """The record's fields for the step `cur` is about to close (`optimizer`: its id): its own
        backward remembered, or the shared one's device and a marker (its loss is set by `read`)."""
        if cur["losses"]:
            self.loss_device, self.stepped = cur["loss_device"], {optimizer}
            return {}
        if self.loss_device is None or optimizer in self.stepped:
            return {}  # no backward since the start of the run, or none new for this optimizer
        self.stepped.add(optimizer)
        cur["loss_device"] = self.loss_device
        return {"shared_backward": True}

    def read(self, record: dict) -> None:
        """Records are read in step order: a shared step takes the loss its source step read."""
        if record.get("shared_backward"):
            record["loss"] = self.loss
        elif record.get("loss") is not None:
            self.loss = record["loss"]
