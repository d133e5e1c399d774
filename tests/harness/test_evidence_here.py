"""What `evaluate` and `validate` say at start about the evidence this machine collects."""

from __future__ import annotations

import pytest

from gpu2tpu.harness import evidence_here
from gpu2tpu.record import perf_samples
from gpu2tpu.record.targets import get_target


def test_missing_cpu_samples_are_named_with_what_to_enable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(perf_samples, "available", lambda: False)
    text = evidence_here.summary(get_target("xla-cpu"))
    collected, missing = text.splitlines()
    assert "kernel view" in collected and "CPU samples" not in collected
    assert missing.startswith("NOT collected here") and "`unverified`" in missing
    assert "perf_event_paranoid=1" in missing and "CAP_PERFMON" in missing


def test_nothing_missing_says_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(perf_samples, "available", lambda: True)
    text = evidence_here.summary(get_target("xla-cpu"))
    assert "NOT collected" not in text and "CPU samples" in text


def test_a_tpu_target_needs_the_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(perf_samples, "available", lambda: True)
    lines = {e.what: e for e in evidence_here.collectable(get_target("tpu"))}
    assert any("accelerator" in what for what in lines)
    assert not any("accelerator" in e.what for e in evidence_here.collectable(get_target("xla-cpu")))
