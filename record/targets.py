"""Targets: the hardware a migration must run on. Everything the harness knows about one lives here
(environment, which runtime device types and tensor devices count, how the agent is told about it).

Adding a target is one entry in TARGETS (and a price row in leaderboard/data/prices.csv).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpu2tpu.errors import UserError

# Variables that select a device: never inherited from the caller's environment.
DEVICE_VARS = ("PJRT_DEVICE", "CPU_NUM_DEVICES", "XLA_USE_SPMD", "TPU_NAME", "XLA_FLAGS",
               "TORCH_DEVICE_BACKEND_AUTOLOAD", "TPU_SKIP_MDS_QUERY")
# Off a TPU host, TorchTPU (if installed) must not register itself: a plain backward() then probes
# for a TPU for minutes. Every run that is not on a TorchTPU target gets these.
NO_TORCH_TPU = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "TPU_SKIP_MDS_QUERY": "1"}


@dataclass(frozen=True)
class Target:
    name: str
    backend: str  # the runtime the migration must use: "torch_xla" or "torch_tpu"
    device_types: tuple[str, ...]  # runtime device types (probe's `device_type`) that count
    tensor_devices: tuple[str, ...]  # torch device types a parameter / loss must live on
    base_env: dict[str, str] = field(default_factory=dict)
    chips_var: str | None = None  # variable that sets how many devices to emulate, if any
    emulated: bool = False  # runs on this machine's CPU, standing in for the accelerator

    def env(self, chips: int) -> dict[str, str]:
        """Variables a run on this target gets (after the caller's device variables are dropped)."""
        env = dict(self.base_env)
        if self.chips_var:
            env[self.chips_var] = str(chips)
        if self.backend != "torch_tpu":
            env.update(NO_TORCH_TPU)
        return env

    def on_target(self, device: str | None) -> bool:
        """Is a tensor device string (`xla:0`, `tpu:1`, `cpu`) on this target?"""
        return bool(device) and str(device).split(":")[0] in self.tensor_devices

    def describe(self, chips: int) -> str:
        """One line for the agent's task statement."""
        if self.emulated:
            shown = {k: v for k, v in self.env(chips).items() if k in (*self.base_env, self.chips_var)}
            return (f"{chips} TPU chip(s), emulated here by torch_xla on CPU "
                    f"({', '.join(f'{k}={v}' for k, v in shown.items())})")
        return f"{chips} TPU chip(s) through {self.backend}"


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("xla-cpu", "torch_xla", ("CPU",), ("xla",), {"PJRT_DEVICE": "CPU"}, "CPU_NUM_DEVICES",
           emulated=True),
    Target("tpu", "torch_xla", ("TPU",), ("xla",), {"PJRT_DEVICE": "TPU"}),
    Target("torchtpu", "torch_tpu", ("TPU",), ("tpu",)),
)}
TARGET_NAMES = tuple(TARGETS)
DEFAULT_TARGET = "xla-cpu"


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise UserError(f"unknown target {name!r}; choose one of {', '.join(TARGET_NAMES)}") from None


def reference_env() -> dict[str, str]:
    """The reference device's variables: CUDA if the machine has it, else CPU (nothing to set)."""
    return dict(NO_TORCH_TPU)
