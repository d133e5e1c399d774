"""Reading what a run left behind: the probe's trace, the process facts, the goal metric."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Trace:
    start: dict[str, Any] = field(default_factory=dict)
    end: dict[str, Any] | None = None
    optimizer: dict[str, Any] | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    autocast: list[dict[str, Any]] = field(default_factory=list)
    grad_scaler: dict[str, Any] | None = None
    forward_dtype: str | None = None
    seeds: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, Any] | None = None  # leaf module types and hyper-parameters
    integrity: dict[str, Any] | None = None  # probe hooks the run rebound
    init: dict[str, Any] | None = None  # RNG-independent signals of the first training forward
    anomalies: list[str] = field(default_factory=list)  # what the probe itself never writes

    @classmethod
    def load(cls, path: Path) -> Trace:
        trace = cls()
        if not path.exists():
            return trace
        for number, line in enumerate(path.read_text().splitlines(), 1):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            if not isinstance(event, dict):
                trace.anomalies.append(f"line {number} is not an event")
                continue
            kind = event.get("event")
            trace._check_order(kind, event, number)
            if kind == "start" and not trace.start:
                trace.start = event
            elif kind == "end":
                trace.end = event
            elif kind == "optimizer" and trace.optimizer is None:
                trace.optimizer = event
            elif kind == "step":
                trace.steps.append(event)
            elif kind == "autocast":
                trace.autocast.append(event)
            elif kind == "grad_scaler":
                trace.grad_scaler = event
            elif kind == "forward_output" and trace.forward_dtype is None:
                trace.forward_dtype = event.get("dtype")
            elif kind == "seed":
                trace.seeds.append(event)
            elif kind == "model" and trace.model is None:
                trace.model = event
            elif kind == "integrity":
                trace.integrity = event
            elif kind == "init" and trace.init is None:
                trace.init = event
        return trace

    def _check_order(self, kind: Any, event: dict[str, Any], number: int) -> None:
        """The probe writes one start record first and numbers its steps upwards: anything else was
        written into its channel by someone else (a replayed or forged trace)."""
        if kind == "start" and (self.start or number != 1):
            self.anomalies.append(f"a second start record at line {number}" if self.start
                                  else f"the start record is at line {number}, not first")
        elif number == 1 and kind != "start":
            self.anomalies.append(f"the trace begins with a {kind!r} record, not the start record")
        if kind == "step" and self.steps:
            last, this = self.steps[-1].get("step"), event.get("step")
            if isinstance(last, int) and isinstance(this, int) and this <= last:
                self.anomalies.append(f"step {this} after step {last} at line {number}")

    @property
    def applied(self) -> list[dict[str, Any]]:
        """Optimizer steps that updated the weights (GradScaler skips left out)."""
        return [s for s in self.steps if not s.get("skipped")]

    @property
    def losses(self) -> list[float]:
        return [_num(s.get("loss")) for s in self.applied]

    @property
    def runtime(self) -> dict[str, Any]:
        return (self.end or {}).get("runtime") or {}

    def counters_at(self, step: int) -> dict[str, Any] | None:
        """Cumulative XLA counters recorded at the end of optimizer step `step` (clamped)."""
        if not self.steps:
            return None
        return self.steps[min(step, len(self.steps) - 1)].get("counters")

    @property
    def final_counters(self) -> dict[str, Any] | None:
        return (self.end or {}).get("counters") or self.counters_at(len(self.steps))

    def step_deltas(self, key: str, warmup: int) -> list[float]:
        """How much cumulative counter `key` grew in each optimizer step after `warmup` steps
        (steps without counters left out)."""
        out = []
        for i in range(max(1, warmup), len(self.steps)):
            before, after = self.steps[i - 1].get("counters"), self.steps[i].get("counters")
            if isinstance(before, dict) and isinstance(after, dict):
                out.append(float(after.get(key, 0)) - float(before.get(key, 0)))
        return out

    def step_median(self, key: str, warmup: int) -> float | None:
        """The median of a per-step number (`wall_s`, `cpu_s`) after `warmup` steps, or None."""
        values = [float(s[key]) for s in self.steps[warmup:] if isinstance(s.get(key), (int, float))]
        return statistics.median(values) if values else None

    def median_step_time(self, warmup: int) -> float | None:
        return self.step_median("wall_s", warmup)

    def autocast_in_effect(self) -> list[tuple[str, str]]:
        return sorted({(a["device_type"], a["dtype"]) for a in self.autocast if a.get("enabled")})


def _num(value: Any) -> float:
    return float(value) if value is not None else math.nan


@dataclass
class RunRecord:
    """One run's evidence: process facts (harness-observed), its trace, its goal metric and, for a
    candidate, the static scan of its patch. A file not on disk is None; regrade also sets None
    for one report.json does not list (its hash unchecked, it could say anything)."""

    process: dict[str, Any]
    trace: Trace
    goal: dict[str, Any]
    scan: dict[str, Any] | None = None  # scan.json: the static scan of a candidate's patch
    kernel: dict[str, Any] | None = None  # kernel.json: what the kernel saw, recorded from outside

    @classmethod
    def load(cls, run_dir: Path) -> RunRecord:
        return cls(process=read_json(run_dir / "process.json"),
                   trace=Trace.load(run_dir / "trace.jsonl"),
                   goal=read_json(run_dir / "goal.json"),
                   scan=read_json(run_dir / "scan.json") if (run_dir / "scan.json").exists() else None,
                   kernel=read_json(run_dir / "kernel.json") if (run_dir / "kernel.json").exists()
                   else None)

    @property
    def exit_code(self) -> int | None:
        return self.process.get("exit_code")

    @property
    def goal_value(self) -> float | None:
        value = self.goal.get("value")
        return float(value) if isinstance(value, (int, float)) else None


def read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else {}
