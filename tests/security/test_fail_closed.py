"""Issue 39: evidence the grader could not collect is missing evidence, never a pass. A grader
without permission to sample the graded process's CPU (no CAP_PERFMON, perf_event_paranoid >= 2:
most machines) grades even the gold migration `unverified`, says so before the compute, and names
what to enable. Run as a user types it, with the capabilities dropped (minutes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from security_attacks import prediction

from gpu2tpu.record import perf_samples
from gpu2tpu.tasks.finder import find_task


def _without_perf(argv: list[str]) -> list[str]:
    """`argv` run where perf_event_open is not permitted: root drops the capabilities that grant
    it (capsh); any other user on a machine with perf_event_paranoid >= 2 lacks them already."""
    if os.geteuid() == 0:
        capsh = shutil.which("capsh")
        assert capsh, "capsh is needed to drop capabilities (Debian: apt-get install libcap2-bin)"
        return [capsh, "--drop=cap_perfmon,cap_sys_admin", "--", "-c", 'exec "$@"', "grader", *argv]
    if perf_samples.available():
        pytest.skip("this user may sample other processes here and cannot give that up")
    return argv


@pytest.mark.slow
def test_without_cpu_samples_the_gold_is_unverified_not_migrated(tmp_path: Path) -> None:
    spec = find_task("cifar_amp")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(prediction("gold", patch=spec.gold_patch.read_text()))
    gpu2tpu = str(Path(sys.executable).with_name("gpu2tpu"))
    probe = subprocess.run(_without_perf([sys.executable, "-c", "from gpu2tpu.record import "
                                          "perf_samples; print(perf_samples.available())"]),
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "False", probe  # the permission really is gone
    done = subprocess.run(_without_perf([gpu2tpu, "evaluate", "--predictions", str(preds), "--run-id",
                                         "noperf", "--runs", str(tmp_path / "runs"), "--tasks",
                                         "cifar_amp"]), capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    # said once, before the compute, with what to enable
    said = [line for line in done.stderr.splitlines() if line.startswith("NOT collected here")]
    assert len(said) == 1 and "perf_event_paranoid" in said[0], done.stderr[-3000:]
    report = json.loads((tmp_path / "runs" / "noperf" / "gold" / "cifar_amp" / "report.json").read_text())
    verdict = report["verdict"]
    assert verdict["migrated"] is False and verdict["category"] == "unverified", verdict["categories"]
    assert verdict["silent"] is False and verdict["failing"] == ["hardware"], verdict
    line = next(e for e in verdict["criteria"]["hardware"]["evidence"] if e["category"] == "unverified")
    assert "CPU samples" in line["text"] or "perf_event_open" in line["text"], line
    assert "sysctl -w kernel.perf_event_paranoid=1" in line["text"], line
