"""Calibration runs of the probe (record/calibration.py): the reference's first optimizer step
again, on the same initial weights and the same first batch, with one thing changed.

- `rng:K`: the random generators are advanced by K blocks at the model's first training forward,
  so dropout masks and anything else drawn inside the step come from other random numbers (what a
  correct migration's device generator does to step 0);
- `bf16`: every training forward of the model runs under bfloat16 autocast on its input's device
  (what a migration that the task's precision policy allows does to step 0);
- `start:K`: the generators are advanced by K blocks where training starts, when the first
  optimizer is built (after the model's initialisation, before the data, noise or rollout it draws
  for its first step), so step 0 trains on another draw of its batch at the same initial weights
  (what a migration whose data draws from the device's generator does to step 0).

The run stops after its first optimizer step. Only the harness sets `GPU2TPU_CALIBRATE`, and only
for reference runs: a candidate's probe never calibrates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from gpu2tpu.record.probe import Recorder

RNG_BLOCK = 1009  # random numbers drawn per block of advance


def install_calibration(rec: Recorder, mode: str) -> None:
    """Install the hooks of one calibration mode (`rng:K`, `start:K` or `bf16`); ValueError for
    another."""
    kind, _, arg = mode.partition(":")
    if kind not in ("rng", "start", "bf16") or (kind != "bf16" and not arg.isdigit()):
        raise ValueError(f"unknown calibration mode {mode!r} (rng:K, start:K or bf16)")
    if kind == "start":
        _advance_at_first_optimizer(rec, mode, int(arg))
    from torch.nn.modules.module import (
        register_module_forward_hook,
        register_module_forward_pre_hook,
    )
    from torch.optim.optimizer import register_optimizer_step_post_hook

    state: dict[str, Any] = {"depth": 0, "advanced": False, "casts": []}

    def watched(module: torch.nn.Module) -> bool:
        root = rec.root_module
        if root is None:
            return False
        if module is root:
            return True  # a root without a forward of its own: its children with parameters
        return type(root).forward is torch.nn.Module.forward and \
            any(module is c for c in root.children())

    def before(module: torch.nn.Module, args: tuple) -> None:
        if kind == "start" or not torch.is_grad_enabled() or not watched(module):
            return
        state["depth"] += 1
        if state["depth"] > 1:
            return
        # where the model computes: its parameters' device (a batch in a dict, or one the model
        # moves itself, says nothing), else its first tensor argument's
        weight = next(module.parameters(), None)
        x = next((a for a in args if isinstance(a, torch.Tensor)), None)
        device = weight.device if weight is not None else x.device if x is not None else torch.device("cpu")
        rec.emit("calibration", mode=mode, device=str(device))
        if kind == "rng" and not state["advanced"]:
            state["advanced"] = True
            _advance(int(arg) * RNG_BLOCK, device)
        if kind == "bf16":
            cast = torch.autocast(device_type=device.type, dtype=torch.bfloat16)
            cast.__enter__()
            state["casts"].append(cast)

    def after(module: torch.nn.Module, args: tuple, output: Any) -> None:
        if not torch.is_grad_enabled() or not watched(module) or state["depth"] == 0:
            return
        state["depth"] -= 1
        if state["depth"] == 0 and state["casts"]:
            state["casts"].pop().__exit__(None, None, None)

    def stop_after_first_step(opt: Any, args: Any, kwargs: Any) -> None:
        if rec.step >= 1:  # the probe's own post hook (registered first) recorded step 0
            raise SystemExit(0)

    register_module_forward_pre_hook(before)
    register_module_forward_hook(after)
    register_optimizer_step_post_hook(stop_after_first_step)


def _advance(n: int, device: torch.device) -> None:
    torch.rand(n)  # the CPU generator
    if device.type != "cpu":
        torch.rand(n, device=device)  # the device's own


def _advance_at_first_optimizer(rec: Recorder, mode: str, blocks: int) -> None:
    """`start:K`: advance the generators once, as the first optimizer is built."""
    base_init = torch.optim.Optimizer.__init__
    done: list[bool] = []

    def init(self: torch.optim.Optimizer, params: Any, defaults: Any) -> None:
        base_init(self, params, defaults)
        if done:
            return
        done.append(True)
        device = next((p.device for g in self.param_groups for p in g["params"]), torch.device("cpu"))
        rec.emit("calibration", mode=mode, device=str(device))
        _advance(blocks * RNG_BLOCK, device)

    torch.optim.Optimizer.__init__ = init  # type: ignore[method-assign]
