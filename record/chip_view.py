"""The accelerator's view of a run, read from outside the graded process (record/kernel_view.py
shows it the run's processes at every observation): on a TPU host the accelerator device files
and the chips' interrupts, on the emulated target XLA's CPU time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gpu2tpu.record.kernel_view import KernelView


class ChipView(Protocol):
    """The accelerator's view of the run, read from outside the graded process. On a TPU host:
    the accelerator device files the run holds open (/dev/accel*, /dev/vfio/*) and, where the
    driver exposes them, the chips' own counters; on the emulated target (XLA on this CPU) the
    stand-in is the CPU time the kernel saw in XLA's runtime and JIT code (HostChip)."""

    name: str

    def sample(self, pids: list[int], view: KernelView) -> None: ...

    def summary(self, view: KernelView) -> dict[str, Any]: ...


class HostChip:
    """The emulated target's chip is this machine's CPU running XLA's code: its activity is the
    CPU time sampled in XLA's runtime and JIT code (judge/kernel_checks.py), and it has no
    device file."""

    name = "xla-cpu"

    def sample(self, pids: list[int], view: KernelView) -> None:
        return None

    def summary(self, view: KernelView) -> dict[str, Any]:
        return {"kind": self.name, "device_files": view.device_files()}


class AccelChip:
    """A TPU host: the chips are PCI devices of Google's vendor id, reached through /dev/accel*
    (v2-v4) or /dev/vfio/* (v5e and later). The kernel's view of their use: which of those files
    the run holds open, and the interrupts each chip raised meanwhile (/proc/interrupts, counted
    by the kernel). Duty cycle and HBM use come only from libtpu's metrics service inside the
    graded process, so they are not read here (docs/design.md)."""

    name = "tpu"
    VENDOR = "0x1ae0"

    def __init__(self, pci_root: str = "/sys/bus/pci/devices", interrupts: str = "/proc/interrupts"):
        self.interrupts_file = interrupts
        self.chips = sorted(d.name for d in _dirs(pci_root) if _text(d / "vendor") == self.VENDOR)
        self.first: dict[str, int] | None = None
        self.last: dict[str, int] = {}

    def sample(self, pids: list[int], view: KernelView) -> None:
        counts = chip_interrupts(_text(Path(self.interrupts_file)), self.chips)
        if self.first is None:
            self.first = counts
        self.last = counts

    def summary(self, view: KernelView) -> dict[str, Any]:
        first = self.first or {}
        return {"kind": self.name, "device_files": view.device_files(), "pci_chips": self.chips,
                "interrupts": {c: self.last.get(c, 0) - first.get(c, 0) for c in self.chips}}


def chip_interrupts(text: str, chips: list[str]) -> dict[str, int]:
    """Interrupts per chip (PCI address) summed over CPUs and vectors, from /proc/interrupts."""
    out = dict.fromkeys(chips, 0)
    ncpu = len(text.split("\n", 1)[0].split()) if text else 0
    for line in text.splitlines()[1:]:
        chip = next((c for c in chips if c in line), None)
        if chip is not None:
            fields = line.split()[1:1 + ncpu]
            out[chip] += sum(int(f) for f in fields if f.isdigit())
    return out


def _text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _dirs(path: str) -> list[Path]:
    try:
        return list(Path(path).iterdir())
    except OSError:
        return []
