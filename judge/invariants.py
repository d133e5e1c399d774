"""Training invariants that do not depend on RNG state or on how a migration is written, and the
cross-checks that what the probe recorded really happened. Each check is one evidence line.

Called by the numerics and runs criteria in `criteria.py` (the one home of the criteria)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from gpu2tpu.record.first_batch import gold_first_batch_deviation, input_deviation
from gpu2tpu.record.trace import Trace

if TYPE_CHECKING:
    from gpu2tpu.judge.criteria import CriterionResult
    from gpu2tpu.tasks.spec import Tolerances

# The RNGs a project seeds that any target can reproduce; device-specific seeding (torch.cuda.*)
# has no counterpart off CUDA, and torch.manual_seed seeds every device.
PORTABLE_SEEDS = ("random.seed", "numpy.random.seed", "torch.manual_seed")
POST_CLIP_RTOL = 0.02


def check_invariants(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    _check_clip_value(res, ref, tr)
    _check_seeds(res, ref, tr)
    _check_train_mode(res, ref, tr)
    _check_param_dtypes(res, ref, tr)
    _check_post_clip(res, ref, tr)


def _check_clip_value(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    rv = sorted({v for s in ref.applied for v in s.get("clip_value") or []})
    cv = sorted({v for s in tr.applied for v in s.get("clip_value") or []})
    res.check(rv == cv, f"clip_grad_value_ clip_value: {cv or 'none'} (reference {rv or 'none'})",
              "config_drift")


def seed_values(trace: Trace) -> dict[str, list[Any]]:
    """Every seed the project's code set, by function: not those torch sets for its own machinery
    (each DataLoader worker is seeded from the main process's generator, which a correct migration
    may draw from differently: a seed torch derives is not configuration)."""
    out: dict[str, list[Any]] = {}
    for s in trace.seeds:
        by = str(s.get("by") or "")
        if by == "torch" or by.startswith("torch."):
            continue
        out.setdefault(str(s.get("fn")), []).append(s.get("value"))
    return out


def _check_seeds(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    rs, cs = seed_values(ref), seed_values(tr)
    diffs = [f"{fn} {cs.get(fn, 'never called')} (reference {rs[fn]})" for fn in PORTABLE_SEEDS
             if fn in rs and sorted(map(str, cs.get(fn, []))) != sorted(map(str, rs[fn]))]
    shown = "; ".join(f"{fn} {vals}" for fn, vals in sorted(cs.items())) or "none"
    res.check(not diffs, "seeding of every RNG the reference seeds: " +
              ("; ".join(diffs) if diffs else f"same ({shown})"), "config_drift")


def _eval_modules(step: dict[str, Any]) -> int | None:
    state = step.get("train_modules")
    return None if not state else int(state[1]) - int(state[0])


def _check_train_mode(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    """Modules in eval mode during training forwards (a wrapper module adds one in training mode,
    so the eval count, not the training count, is compared)."""
    pairs = [(i, _eval_modules(r), _eval_modules(c)) for i, (r, c) in enumerate(zip(ref.applied, tr.applied))]
    known = [(i, r, c) for i, r, c in pairs if r is not None]
    bad = [(i, r, c) for i, r, c in known if c != r]
    text = (f"modules in eval mode during training forwards: step {bad[0][0]} has {bad[0][2]}, "
            f"reference {bad[0][1]}" if bad else
            f"train/eval state of every module identical over {len(known)} steps")
    res.check(not bad, text, "config_drift")


def params_changed(ref: Trace, tr: Trace) -> bool:
    """Whether the trained parameters differ from the reference's in number or shapes."""
    ro, co = ref.optimizer or {}, tr.optimizer or {}
    return ro.get("param_count") != co.get("param_count") or \
        ro.get("param_shapes_sha") != co.get("param_shapes_sha")


def _check_param_dtypes(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    rd = (ref.optimizer or {}).get("param_dtypes")
    cd = (tr.optimizer or {}).get("param_dtypes")
    if rd is None:
        return
    # the same dtypes over another number of tensors: the parameters changed, not their precision
    counted = isinstance(cd, dict) and set(cd) == set(rd) and params_changed(ref, tr)
    res.check(rd == cd, f"trained parameter dtypes {cd} (reference {rd})" +
              ("; the trained parameters changed" if rd != cd and counted else ""),
              "workload_changed" if counted else "config_drift")


def check_structure(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    """Module types and hyper-parameters (dropout p, norm eps and momentum, ...), not only shapes."""
    rm, cm = (ref.model or {}).get("leaf_modules"), (tr.model or {}).get("leaf_modules")
    if rm is None:
        return
    cm = cm or []
    diff = next((i for i, (a, b) in enumerate(zip(rm, cm)) if a != b), None)
    if diff is None and len(rm) != len(cm):
        diff = min(len(rm), len(cm))
    text = ("model structure: identical module types and hyper-parameters "
            f"({len(rm)} leaf modules)" if diff is None else
            f"model structure differs at leaf module {diff}: "
            f"{cm[diff] if diff < len(cm) else 'missing'} vs reference "
            f"{rm[diff] if diff < len(rm) else 'missing'}")
    res.check(diff is None, text, "workload_changed")
    rs, cs = (ref.model or {}).get("shared_params"), (tr.model or {}).get("shared_params")
    if rs is not None:
        res.check(rs == cs, f"tied parameters {cs or 'none'}" + ("" if rs == cs else f" (reference "
                  f"{rs or 'none'})"), "workload_changed")


def _post_clip_mismatch(step: dict[str, Any]) -> str | None:
    """Why this step's recorded post-clip norm cannot follow from its recorded clip (None: fine)."""
    clips = [c for c in step.get("clip") or [] if float(c.get("norm_type", 2.0)) == 2.0]
    norm, post = step.get("grad_norm"), step.get("post_clip_norm")
    if not clips or norm is None or post is None:
        return None
    expected = min([float(norm)] + [float(c["max_norm"]) for c in clips])
    if step.get("clip_value"):  # a value clip afterwards can only shrink it further
        ok = post <= expected * (1 + POST_CLIP_RTOL) + 1e-6
    else:
        ok = abs(post - expected) <= POST_CLIP_RTOL * expected + 1e-6
    return None if ok else f"step {step.get('step')}: norm after clipping {post:.6g}, " \
        f"expected min(norm {norm:.6g}, max_norm) = {expected:.6g}"


def _check_post_clip(res: CriterionResult, ref: Trace, tr: Trace) -> None:
    if any(_post_clip_mismatch(s) for s in ref.applied):
        return  # the reference itself clips differently (e.g. scaled gradients): not comparable
    bad = [m for m in map(_post_clip_mismatch, tr.applied) if m]
    checked = sum(1 for s in tr.applied if s.get("post_clip_norm") is not None and s.get("clip"))
    errors = [_post_clip_error(s) for s in tr.applied]
    worst = max([e for e in errors if e is not None], default=0.0)
    res.check(not bad, f"gradient norm after clipping = min(norm, max_norm) on {checked} steps" +
              (f"; {len(bad)} differ, first {bad[0]}" if bad else ""), "config_drift",
              ("post_clip", worst, POST_CLIP_RTOL) if checked else None)


def _post_clip_error(step: dict[str, Any]) -> float | None:
    """Relative error of the post-clip norm against min(norm, max_norm) (no value clip after)."""
    clips = [c for c in step.get("clip") or [] if float(c.get("norm_type", 2.0)) == 2.0]
    norm, post = step.get("grad_norm"), step.get("post_clip_norm")
    if not clips or norm is None or post is None or step.get("clip_value"):
        return None
    expected = min([float(norm)] + [float(c["max_norm"]) for c in clips])
    return abs(post - expected) / expected if expected > 0 else None


def check_integrity(res: CriterionResult, gold: Trace, tr: Trace, process: dict[str, Any]) -> None:
    """The trace was written by the probe in this run: it starts in the directory the harness ran
    the command in, its hooks were not rebound and it is not a copy of the gold run's trace (real
    step times never repeat to the last digit)."""
    want, got = process.get("cwd"), tr.start.get("cwd")
    if want is not None:
        same = isinstance(got, str) and os.path.normpath(got) == os.path.normpath(want)
        res.check(same, "trace started in the run's own working directory" if same
                  else f"trace's start record names another working directory ({got!r}, not the "
                  "run's): a trace recorded elsewhere", "tampered")
    if tr.anomalies:
        res.check(False, f"trace not as the probe writes it: {'; '.join(tr.anomalies[:3])}", "tampered")
    if tr.integrity is not None:
        rebound = tr.integrity.get("rebound") or []
        res.check(not rebound, "probe hooks intact" if not rebound else
                  f"the run replaced the probe's own hooks: {', '.join(rebound)}", "tampered")
    elif tr.end:  # the probe writes it just before its end record: dropped by a filter
        res.check(False, "the trace has the probe's end record but not the integrity record "
                  "written just before it: the run filtered its own trace", "tampered")
    times, gold_times = [s.get("wall_s") for s in tr.steps], [s.get("wall_s") for s in gold.steps]
    copied = len(times) > 1 and times == gold_times
    res.check(not copied, "trace is a copy of the gold run's trace (identical step times)" if copied
              else "trace step times are this run's own", "tampered")


def check_init(res: CriterionResult, tol: Tolerances, ref: Trace, tr: Trace, gold: Trace) -> None:
    """The first training forward's input, which no RNG state of the model moves (data pipeline,
    augmentation, order). Compared only when the first inputs have the same shape (a padded or
    sharded batch is another tensor by design), and only when the gold migration's first batch
    reproduces the reference's (a project drawing data from an unseeded generator does not)."""
    r, c = ref.init or {}, tr.init or {}
    if "input_sum" not in r or "input_sum" not in c:
        return
    if r.get("input_shape") != c.get("input_shape"):
        res.check(True, f"first batch not compared: input shape {c.get('input_shape')} vs reference "
                  f"{r.get('input_shape')}", "workload_changed")
        return
    gold_dev = gold_first_batch_deviation(ref, gold)
    if gold_dev > tol.init_input_tol:
        res.check(True, f"first batch not compared: the gold migration's already differs from the "
                  f"reference's (deviation {gold_dev:.2g}, limit {tol.init_input_tol}), so this "
                  "project's data is not reproducible under its seed", "workload_changed")
        return
    dev = input_deviation(r, c)
    ok = dev <= tol.init_input_tol
    res.check(ok, f"first batch's inputs {'match' if ok else 'differ from'} the reference's "
              f"(deviation {dev:.2g}, limit {tol.init_input_tol}): data pipeline and order",
              "workload_changed", ("init_input", dev, tol.init_input_tol))
