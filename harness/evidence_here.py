"""What evidence this machine can collect for a verdict, said once when grading starts.

A criterion whose evidence the grader could not collect fails as `unverified` (judge/kernel_checks.py),
never passes: a user learns before the compute, not from every report, what to enable.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from gpu2tpu.harness.node_facts import tpu_device_files
from gpu2tpu.judge.kernel_checks import SAMPLES_HOW
from gpu2tpu.record import perf_samples
from gpu2tpu.record.targets import Target, get_target


@dataclass(frozen=True)
class Evidence:
    what: str
    collected: bool
    how_to_enable: str


def collectable(target: Target) -> list[Evidence]:
    """The supervisor's sources on this machine, for runs on `target`."""
    lines = [
        Evidence("the kernel view of the graded processes (/proc)", Path("/proc/self/maps").is_file(),
                 "grade on Linux with /proc mounted"),
        Evidence("CPU samples (where the run's CPU time went: perf_event_open)", perf_samples.available(),
                 SAMPLES_HOW),
    ]
    if not target.emulated:
        lines.append(Evidence("the accelerator's device files (/dev/accel*, /dev/vfio)",
                              tpu_device_files() > 0,
                              f"grade {target.name} runs on a host with the accelerator attached"))
    return lines


def summary(target: Target) -> str:
    """One paragraph: what is collected, and what is not with what to enable."""
    lines = collectable(target)
    have = [e.what for e in lines if e.collected]
    text = "evidence this machine collects: " + ("; ".join(have) or "none")
    missing = [e for e in lines if not e.collected]
    if missing:
        text += ("\nNOT collected here (runs whose verdict needs it are graded `unverified`, never "
                 "`migrated`): " + "; ".join(f"{e.what}: {e.how_to_enable}" for e in missing))
    return text


_SAID: list[str] = []


def say_at_start(engine_name: str, target_name: str) -> None:
    """Print the summary once per process, before any compute and after the inputs were checked,
    for evaluations on this machine (a Ray cluster's nodes are other machines: each one's kernel
    view says what it collected)."""
    if engine_name == "local" and target_name not in _SAID:
        _SAID.append(target_name)
        print(summary(get_target(target_name)), file=sys.stderr)
