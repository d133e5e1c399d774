"""gpu2tpu probe, part 3 of 3: the hooks it installs in torch (backward, optimizer steps, GradScaler,
autocast, seeding, clipping, the trained module's forwards). Copied beside the probe as
gpu2tpu_probe_hooks.py in a run's workspace; `rec` is the probe's Recorder."""

from __future__ import annotations

import collections
import functools
import gc
import hashlib
import importlib.machinery
import json
import os
import random
import sys
import warnings
import weakref
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from gpu2tpu.record.probe import Recorder


def install_hooks(rec: Recorder) -> None:
    torch.Tensor.backward = _backward_wrapper(rec, torch.Tensor.backward)  # type: ignore[method-assign]
    torch.autograd.backward = _backward_wrapper(rec, torch.autograd.backward)

    scaler_cls = torch.amp.GradScaler
    orig_scale, orig_step = scaler_cls.scale, scaler_cls.step

    def scale(self, outputs):
        if not getattr(rec, "scaler_seen", False):
            rec.scaler_seen = True
            rec.emit("grad_scaler", enabled=bool(self.is_enabled()))
        scaled = orig_scale(self, outputs)
        if isinstance(outputs, torch.Tensor) and scaled is not outputs:
            rec.scaled[id(scaled)] = outputs
        return scaled

    def step(self, optimizer, *args, **kwargs):
        before = rec.step
        result = orig_step(self, optimizer, *args, **kwargs)
        if rec.step == before:
            rec.on_optimizer_pre(optimizer)
            rec.on_optimizer_post(skipped=True)
        return result

    scaler_cls.scale, scaler_cls.step = scale, step  # type: ignore[method-assign]

    orig_enter = torch.autocast.__enter__

    def enter(self):
        result = orig_enter(self)
        rec.on_autocast(self.device)
        return result

    torch.autocast.__enter__ = enter  # type: ignore[method-assign]

    from torch.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )
    register_optimizer_step_pre_hook(lambda opt, args, kwargs: rec.on_optimizer_pre(
        opt, closure=any(callable(a) for a in (*args[1:], *kwargs.values()))))
    register_optimizer_step_post_hook(lambda opt, args, kwargs: rec.on_optimizer_post())

    orig_init = torch.optim.Optimizer.__init__

    def opt_init(self, params, defaults):
        orig_init(self, params, defaults)
        hook_root_module(rec, self)

    torch.optim.Optimizer.__init__ = opt_init  # type: ignore[method-assign]

    orig_random_seed = random.seed

    def random_seed(a=None, version=2):
        rec.on_seed("random.seed", a, _caller())
        return orig_random_seed(_shifted(a), version)

    random.seed = random_seed
    wrap_seeds(rec, torch, ("manual_seed",), "torch")
    wrap_seeds(rec, torch.cuda, ("manual_seed", "manual_seed_all"), "torch.cuda")
    wrap_clip(rec)
    if "numpy" in sys.modules:
        wrap_seeds(rec, sys.modules["numpy"].random, ("seed",), "numpy.random")
    else:
        sys.meta_path.insert(0, _PostImport(
            "numpy", lambda: wrap_seeds(rec, sys.modules["numpy"].random, ("seed",), "numpy.random")))

    def after_torch_xla() -> None:
        wrap_clip(rec)
        import torch_xla
        import torch_xla.core.xla_model as xm
        wrap_seeds(rec, torch_xla, ("manual_seed",), "torch_xla")
        wrap_seeds(rec, xm, ("set_rng_state",), "torch_xla.core.xla_model")

    sys.meta_path.insert(0, _PostImport("torch_xla", after_torch_xla))


def _caller() -> str | None:
    """The module whose code called the seeding function (two frames up: past the wrapper)."""
    try:
        return sys._getframe(2).f_globals.get("__name__")
    except ValueError:
        return None


def _shifted(seed):
    """GPU2TPU_SEED_OFFSET=k (reference spread of a project without a seed flag): k is added to every
    integer seed the project sets; the trace records the requested value and the offset."""
    offset = int(os.environ.get("GPU2TPU_SEED_OFFSET") or 0)
    if offset and isinstance(seed, int) and not isinstance(seed, bool):
        return seed + offset
    return seed


def harness_seed(rec: Recorder) -> None:
    """GPU2TPU_SEED=s (tasks whose project never seeds): seed torch, numpy and random once before
    the script starts, so its reference runs are reproducible and a candidate starts alike."""
    value = os.environ.get("GPU2TPU_SEED")
    if not value:
        return
    seed = int(value)
    rec.emit("seed", fn="harness", value=seed)
    torch.random.manual_seed(seed)
    random.Random.seed(random._inst, seed)
    try:
        import numpy

        numpy.random.mtrand._rand.seed(seed)  # the global RandomState, without the recorder
    except ImportError:
        pass


def save_model(rec: Recorder, path: str) -> None:
    """Write the trained module's state_dict, on the CPU, after the end record (adds no counted
    execution). Nothing is written when no optimizer ever stepped a module."""
    module = getattr(rec, "root_module", None)
    if module is None:
        return
    state = {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v
             for k, v in module.state_dict().items()}
    torch.save(state, path)


def _backward_wrapper(rec: Recorder, orig):
    """Record the loss(es) a backward pass starts from; Tensor.backward calls autograd.backward,
    so only the outermost call records."""
    def backward(tensors, *args, **kwargs):
        if not rec.in_backward:
            for t in (tensors if isinstance(tensors, (list, tuple)) else [tensors]):
                rec.on_backward(t)
        rec.in_backward = True
        try:
            return orig(tensors, *args, **kwargs)
        finally:
            rec.in_backward = False

    return backward


def wrap_seeds(rec: Recorder, owner, names: tuple[str, ...], prefix: str) -> None:
    """Record every call of the seeding functions `names` of module `owner` (then seed)."""
    for name in names:
        fn = getattr(owner, name, None)
        if fn is None or getattr(fn, "_gpu2tpu_probe", False):
            continue

        def seeded(*args, _fn=fn, _name=f"{prefix}.{name}", **kwargs):
            if not rec.in_seed:  # torch.manual_seed seeds CUDA itself: record the outer call only
                value = args[0] if args else next(iter(kwargs.values()), None)
                rec.on_seed(_name, value, _caller())
            outer, rec.in_seed = rec.in_seed, True
            try:
                if args and not outer:  # nested calls already got the shifted seed
                    args = (_shifted(args[0]), *args[1:])
                return _fn(*args, **kwargs)
            finally:
                rec.in_seed = outer

        seeded._gpu2tpu_probe = True  # type: ignore[attr-defined]
        setattr(owner, name, seeded)


def wrap_clip(rec: Recorder) -> None:
    """(Re)install the hooks on every clipping entry point (norm, value, the functional pair
    get_total_norm + clip_grads_with_norm_; foreach is an argument of each); torch_xla replaces
    clip_grad_norm_ when imported, so this runs again after its import."""
    import torch.nn.utils as nn_utils
    import torch.nn.utils.clip_grad as clip_mod
    for owner in (nn_utils, clip_mod):
        for name, wrapper in (("clip_grad_norm_", _clip_wrapper), ("clip_grad_value_", _clip_value_wrapper),
                              ("clip_grads_with_norm_", _clip_with_norm_wrapper)):
            fn = getattr(owner, name, None)
            if fn is not None and not getattr(fn, "_gpu2tpu_probe", False):
                setattr(owner, name, wrapper(rec, fn))


def _clip_wrapper(rec: Recorder, fn):
    # functools.wraps keeps the signature: torch_xla refuses to patch a function whose differs.
    @functools.wraps(fn)
    def clip(parameters, max_norm, norm_type=2.0, *args, **kwargs):
        outer, rec.in_clip = rec.in_clip, True
        try:
            total = fn(parameters, max_norm, norm_type, *args, **kwargs)
        finally:
            rec.in_clip = outer
        if not outer:
            rec.on_clip(max_norm, norm_type, total)
        return total

    clip._gpu2tpu_probe = True  # type: ignore[attr-defined]
    return clip


def _clip_value_wrapper(rec: Recorder, fn):
    @functools.wraps(fn)
    def clip(parameters, clip_value, *args, **kwargs):
        if not rec.in_clip:
            rec.on_clip_value(clip_value)
        return fn(parameters, clip_value, *args, **kwargs)

    clip._gpu2tpu_probe = True  # type: ignore[attr-defined]
    return clip


def _clip_with_norm_wrapper(rec: Recorder, fn):
    """The functional form: the norm comes from get_total_norm (its norm_type is not passed here,
    so 2.0 is recorded; the post-clip cross-check still holds for the 2-norm)."""
    @functools.wraps(fn)
    def clip(parameters, max_norm, total_norm, *args, **kwargs):
        if not rec.in_clip:
            rec.on_clip(max_norm, 2.0, total_norm)
        outer, rec.in_clip = rec.in_clip, True
        try:
            return fn(parameters, max_norm, total_norm, *args, **kwargs)
        finally:
            rec.in_clip = outer

    clip._gpu2tpu_probe = True  # type: ignore[attr-defined]
    return clip


class _ProbeHooks(collections.OrderedDict):
    """A module's hook table that drops the probe's own hooks when pickled or deep-copied: a
    project that `torch.save`s its whole model (or copies it) gets the module as if unprobed."""

    def __init__(self, hooks) -> None:
        super().__init__(hooks)
        self.probe_ids: set[int] = set()

    def __reduce__(self):
        kept = [(k, v) for k, v in self.items() if k not in self.probe_ids]
        return (collections.OrderedDict, (kept,))


def _probe_hook(module: torch.nn.Module, table: str, register, hook, **kwargs) -> None:
    hooks = getattr(module, table)
    if not isinstance(hooks, _ProbeHooks):
        hooks = _ProbeHooks(hooks)
        object.__setattr__(module, table, hooks)
    hooks.probe_ids.add(register(hook, **kwargs).id)


_HOOKED: weakref.WeakSet = weakref.WeakSet()


def hook_root_module(rec: Recorder, opt) -> None:
    """Hook the module that owns the optimizer's parameters, for batch size and input device."""
    ids = {id(p) for g in opt.param_groups for p in g["params"]}
    best, best_key = None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = [o for o in gc.get_objects() if isinstance(o, torch.nn.Module)]
    for obj in objects:
        if obj not in _HOOKED:
            own = [id(p) for p in obj.parameters()]
            overlap = sum(1 for i in own if i in ids)
            if overlap:  # ties (a wrapper such as DataParallel, tied weights): the outermost
                key = (overlap, -len(own), sum(1 for _ in obj.modules()))
                if best_key is None or key > best_key:
                    best, best_key = obj, key
    owned = best is not None
    if best is None:  # the optimised tensors belong to no module (an attack on a fixed network's
        best = _outermost_module(objects)  # inputs): observe the largest network that exists now
    if best is not None:
        if owned and getattr(rec, "root_module", None) is None:
            rec.root_module = best  # the trained model, whose weights --save-model writes
        _HOOKED.add(best)
        # A module without a forward of its own (an RL agent whose methods call its actor and
        # critic) is never called: its children that hold parameters are.
        called = [best] if type(best).forward is not torch.nn.Module.forward else \
            [c for c in best.children() if next(c.parameters(), None) is not None]
        for mod in called:
            rec.inner_inputs.roots.add(mod)
            _probe_hook(mod, "_forward_pre_hooks", mod.register_forward_pre_hook,
                        lambda m, a, kw: rec.on_forward(m, a, kw), with_kwargs=True)
            _probe_hook(mod, "_forward_pre_hooks", mod.register_forward_pre_hook,
                        lambda m, a: rec.on_train_state(m))
            _probe_hook(mod, "_forward_hooks", mod.register_forward_hook,
                        lambda m, a, out: rec.on_output(out))
        leaves = [[type(m).__name__, m.extra_repr()] for m in best.modules() if not any(m.children())]
        owners: dict[int, list] = {}
        for _, param in best.named_parameters(remove_duplicate=False):
            owners.setdefault(id(param), []).append(list(param.shape))
        # tied weights as [uses, shape] (names move with wrappers such as DataParallel's module.)
        shared = sorted([len(uses), uses[0]] for uses in owners.values() if len(uses) > 1)
        rec.emit("model", leaf_modules=leaves, shared_params=shared,
                 sha=hashlib.sha256(json.dumps(leaves).encode()).hexdigest())


class _PostImport:
    """A meta-path finder that runs a callback right after one module finishes importing."""

    def __init__(self, name: str, callback) -> None:
        self.name, self.callback, self.done = name, callback, False

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name or self.done:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        exec_module, callback = spec.loader.exec_module, self.callback

        def exec_then_hook(module):
            exec_module(module)
            if not self.done:  # done once the module is imported, not when it is only looked up
                self.done = True
                callback()

        spec.loader.exec_module = exec_then_hook
        return spec


def _outermost_module(objects: list) -> torch.nn.Module | None:
    """The module with the most parameters among those no other module contains, or None."""
    inner = {id(c) for o in objects for c in o.children()}
    outer = [o for o in objects if id(o) not in inner and o not in _HOOKED]
    size, i = max(((sum(p.numel() for p in o.parameters()), i) for i, o in enumerate(outer)), default=(0, -1))
    return outer[i] if size else None
