"""The training configuration and workload a candidate keeps, step by step, against the reference:
optimizer, hyper-parameters, learning-rate schedule, clipping and micro-batching (`config_drift`),
examples per step, step count, trained parameters and model structure (`workload_changed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu2tpu.judge.invariants import check_structure, params_changed
from gpu2tpu.record.calibration import relative_deviation
from gpu2tpu.record.trace import Trace

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult


def _groups_without_lr(trace: Trace) -> list[dict[str, Any]]:
    groups = (trace.optimizer or {}).get("groups") or []
    return [{k: v for k, v in g.items() if k != "lr"} for g in groups]


def _step_values(trace: Trace, key: str) -> list[Any]:
    return [s.get(key) for s in trace.applied]


def check_config(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    rc, cc = (ref.optimizer or {}).get("class"), (tr.optimizer or {}).get("class")
    res.check(rc == cc, f"optimizer {cc} (reference {rc})", "config_drift")
    rg, cg = _groups_without_lr(ref), _groups_without_lr(tr)
    # A group holding more or fewer tensors because the trained parameters themselves changed (a
    # lost weight tie, another model) follows from that change: named by it, not as configuration.
    moved = params_changed(ref, tr)
    counts = [f"group {i} holds {c.get('n_params')!r} tensors vs {r.get('n_params')!r}"
              for i, (r, c) in enumerate(zip(rg, cg)) if moved and r.get("n_params") != c.get("n_params")]
    diffs = [f"group {i} {k}: {c.get(k)!r} vs {r.get(k)!r}" for i, (r, c) in enumerate(zip(rg, cg))
             for k in sorted(set(r) | set(c)) if r.get(k) != c.get(k) and not (moved and k == "n_params")]
    if len(rg) != len(cg):
        diffs.append(f"{len(cg)} parameter groups vs {len(rg)}")
    res.check(not diffs, "optimizer hyper-parameters " + ("; ".join(diffs) if diffs else "identical"),
              "config_drift")
    if counts:
        res.check(False, "; ".join(counts) + ": the trained parameters changed", "workload_changed")
    n = min(len(ref.applied), len(tr.applied))
    def lr_differs(a: list[float] | None, b: list[float] | None) -> bool:
        if a is None:
            return False
        return b is None or len(a) != len(b) or any(relative_deviation(y, x) > 1e-6 for x, y in zip(a, b))

    lr_bad = [i for i, (a, b) in enumerate(zip(_step_values(ref, "lr")[:n], _step_values(tr, "lr")[:n]))
              if lr_differs(a, b)]
    # A changed step count changes a schedule that follows it: the step count is the cause.
    steps_changed = len(ref.applied) != len(tr.applied)
    res.check(not lr_bad, f"learning rate per step over {n} steps" +
              (f": differs from step {lr_bad[0]} on ({_step_values(tr, 'lr')[lr_bad[0]]} vs "
               f"{_step_values(ref, 'lr')[lr_bad[0]]})" if lr_bad else ": identical") +
              ("; the optimizer step count changed" if lr_bad and steps_changed else ""),
              "workload_changed" if steps_changed else "config_drift")
    rclip = sorted({(c["max_norm"], c["norm_type"]) for s in ref.applied for c in s.get("clip") or []})
    cclip = sorted({(c["max_norm"], c["norm_type"]) for s in tr.applied for c in s.get("clip") or []})
    res.check(rclip == cclip, f"clip_grad_norm_ (max_norm, norm_type): {cclip or 'none'} "
              f"(reference {rclip or 'none'})", "config_drift")
    rm, cm = sorted(set(_step_values(ref, "micro_batches"))), sorted(set(_step_values(tr, "micro_batches")))
    res.check(rm == cm, f"micro-batches per step {cm} (reference {rm})", "config_drift")


def check_workload(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    rb = sorted({sum(s.get("batch_size") or []) for s in ref.applied})
    cb = sorted({sum(s.get("batch_size") or []) for s in tr.applied})
    res.check(rb == cb, f"examples per step {cb} (reference {rb})", "workload_changed")
    res.check(len(tr.applied) == len(ref.applied),
              f"{len(tr.applied)} optimizer steps (reference {len(ref.applied)})", "workload_changed")
    ro, co = ref.optimizer or {}, tr.optimizer or {}
    same = not params_changed(ref, tr)
    res.check(same, f"trained parameters {co.get('param_count')} (reference {ro.get('param_count')}),"
              f" shapes {'identical' if same else 'differ'}", "workload_changed")
    check_structure(res, ref, tr)
