"""gpu2tpu probe: run a training script unchanged and record what it really did.

Self-contained (standard library + torch; torch_xla / torch_tpu optional). Usage:
    python probe.py --out trace.jsonl [--read-every K] -- script.py ARGS...   (or -- -m module ARGS)
Lazy device tensors are kept until a sync has materialised them and read in batches, so the probe
adds no executions or compilations of its own. Format: docs/formats.md ("Trace").
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import hashlib
import importlib.machinery
import json
import os
import random
import runpy
import signal
import sys
import time
import traceback
import warnings
import weakref
from typing import Any

import torch

PROBE_VERSION = "1"
SCHEMA_VERSION = 1
ENV_KEYS = ("PJRT_DEVICE", "CPU_NUM_DEVICES", "XLA_USE_SPMD", "CUDA_VISIBLE_DEVICES", "TPU_NAME",
            "WORLD_SIZE", "RANK", "LOCAL_RANK", "XLA_FLAGS")
IMPL_FLAGS = ("foreach", "fused", "capturable", "differentiable")


def _version(name: str) -> str | None:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


INIT_VALUES = ("input_sum", "input_sumsq", "input_wsum", "input_wsumsq")


def _jsonable(value):
    if isinstance(value, torch.Tensor):
        return value.item() if value.numel() == 1 and value.device.type == "cpu" else str(value.shape)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


class XlaCounters:
    """torch_xla metrics, read without forcing any execution."""

    def __init__(self) -> None:
        import torch_xla
        import torch_xla.debug.metrics as met
        self.xla, self.met = torch_xla, met
        self.probe_reads = 0

    def _count(self, name: str) -> int:
        return int(self.met.counter_value(name) or 0)

    def _metric_count(self, name: str) -> int:
        data = self.met.metric_data(name)
        return int(data[0]) if data else 0

    def snapshot(self) -> dict:
        fallback = {n: self._count(n) for n in self.met.counter_names() if n.startswith("aten::")}
        item_reads = fallback.pop("aten::_local_scalar_dense", 0)
        transfers = self._metric_count("TransferFromDeviceTime") - self.probe_reads
        return {"compiles": self._count("UncachedCompile"), "cached_compiles": self._count("CachedCompile"),
                "executions": self._count("ExecuteComputation"), "syncs": self._count("MarkStep"),
                "host_reads": max(transfers, item_reads), "fallback": fallback}

    def syncs(self) -> int:
        return self._count("MarkStep")

    def read(self, tensors: list) -> list[float]:
        before = self._metric_count("TransferFromDeviceTime")
        values = self.xla._XLAC._xla_get_cpu_tensors(tensors)
        self.probe_reads += self._metric_count("TransferFromDeviceTime") - before
        return [float(v) for v in values]

    def seconds(self, name: str) -> float:
        data = self.met.metric_data(name)
        return float(data[1]) / 1e9 if data else 0.0

    def runtime(self, input_sharding: str | None) -> dict:
        import torch_xla.runtime as xr
        spmd = bool(xr.is_spmd())
        world = int(xr.world_size())
        used = world
        if spmd:
            used = _sharding_devices(input_sharding or "")
        return {"backend": "xla", "device_type": xr.device_type(),
                "device_count": int(xr.global_runtime_device_count()), "spmd": spmd,
                "world_size": world, "devices_used": used}


class TpuCounters:
    """TorchTPU (`torch_tpu`, device `tpu`) facts, best effort: its compile-cache counters.

    Off a TPU host this backend cannot run, so only the interface is exercised here."""

    def __init__(self) -> None:
        self.tpu = getattr(torch, "tpu", None)
        self.probe_reads = 0

    def _call(self, name: str) -> int:
        fn = getattr(self.tpu, name, None)
        try:
            return int(fn()) if callable(fn) else 0
        except Exception:
            return 0

    def snapshot(self) -> dict:
        return {"compiles": self._call("_get_cache_misses"), "cached_compiles": self._call("_get_cache_hits"),
                "executions": 0, "syncs": 0, "host_reads": 0, "fallback": {}}

    def syncs(self) -> int:
        return -1  # no lazy graph to wait for: every recorded tensor is readable

    def read(self, tensors: list) -> list[float]:
        return [float(t.float().cpu()) for t in tensors]

    def seconds(self, name: str) -> float:
        return 0.0

    def runtime(self, input_sharding: str | None) -> dict:
        count = self._call("device_count") or 1
        return {"backend": "tpu", "device_type": "TPU", "device_count": count, "spmd": False,
                "world_size": 1, "devices_used": 1}


def _sharding_devices(spec: str) -> int:
    """Devices a tensor is split over, from an HLO sharding string such as {devices=[4,1]0,1,2,3}."""
    if "devices=[" not in spec:
        return 1
    dims = spec.split("devices=[", 1)[1].split("]", 1)[0]
    n = 1
    for d in dims.split(","):
        n *= int(d)
    if "last_tile_dim_replicate" in spec:
        n //= int(dims.split(",")[-1])
    return n


class Recorder:
    def __init__(self, out: str | int, read_every: int) -> None:
        self.root_module: Any = None  # the trained model, whose weights --save-model writes
        # a path, or the inherited pipe to the supervisor, which writes trace.jsonl outside
        self.out = open(out, "a", buffering=1) if isinstance(out, str) else open(out, "w", buffering=1)
        self.read_every = max(1, read_every)
        self.t0 = time.perf_counter()
        self.last_step_t = self.t0
        self.step = 0
        self.xla: XlaCounters | TpuCounters | None = None  # the lazy backend's counters
        self.seen_optimizers: set[int] = set()
        self.autocast_states: set[tuple] = set()
        self.scaled: dict[int, torch.Tensor] = {}
        self.queue: list[dict] = []
        self.input_sharding: str | None = None
        self.backend = "cpu"
        self.in_backward = False
        self.in_clip = False
        self.in_seed = False
        self.init: dict | None = None  # see _init_signals
        self._new_step()

    def emit(self, event: str, **fields) -> None:
        self.out.write(json.dumps({"event": event, **fields}, default=_jsonable) + "\n")

    def _new_step(self) -> None:
        self.cur: dict[str, Any] = {"losses": [], "clip": [], "norm": None, "batch_size": [],
                                    "input_devices": set(),
                    "loss_device": None, "lr": None, "clip_value": [], "post_norm": None,
                    "train_modules": None}

    def counters(self) -> dict | None:
        if self.xla is None and "torch_xla.debug.metrics" in sys.modules and self.backend == "xla":
            self.xla = XlaCounters()
        elif self.xla is None and self.backend == "tpu":
            self.xla = TpuCounters()
        return self.xla.snapshot() if self.xla else None

    # --- hooks -------------------------------------------------------------------------------
    def on_backward(self, tensor: torch.Tensor) -> None:
        loss = self.scaled.pop(id(tensor), tensor)
        self.cur["losses"].append(loss.detach())
        self.cur["loss_device"] = str(loss.device)

    def on_clip(self, max_norm, norm_type, total_norm) -> None:
        self.cur["clip"].append({"max_norm": float(max_norm), "norm_type": float(norm_type)})
        if self.cur["norm"] is None and isinstance(total_norm, torch.Tensor):
            self.cur["norm"] = total_norm.detach()

    def on_clip_value(self, clip_value) -> None:
        self.cur["clip_value"].append(float(clip_value))

    def on_seed(self, fn: str, value) -> None:
        offset = int(os.environ.get("GPU2TPU_SEED_OFFSET") or 0)
        self.emit("seed", fn=fn, value=_jsonable(value), **({"offset": offset} if offset else {}))

    def on_train_state(self, module: torch.nn.Module) -> None:
        """Modules in training mode at the first training forward of each step."""
        if torch.is_grad_enabled() and self.cur["train_modules"] is None:
            mods = list(module.modules())
            self.cur["train_modules"] = [sum(1 for m in mods if m.training), len(mods)]

    def on_forward(self, module, args, kwargs) -> None:
        if not torch.is_grad_enabled():
            return  # evaluation forwards are not part of the training workload
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        if not tensors:
            return
        x = tensors[0]
        if self.step == 0 and self.init is None:
            self.init = self._init_signals(module, x, args, kwargs)
        self.cur["batch_size"].append(int(x.shape[0]) if x.dim() else 1)
        self.cur["input_devices"].add(str(x.device))
        if self.input_sharding is None and x.device.type == "xla" and "torch_xla" in sys.modules:
            self.input_sharding = sys.modules["torch_xla"]._XLAC._get_xla_sharding_spec(x)

    def _init_signals(self, module, x, args, kwargs) -> dict:
        """RNG-independent signal of the first training forward, before it runs: a fingerprint of
        its first input (sum, sum of squares, position-weighted sum: the data pipeline and order),
        computed under no_grad from the input alone. Read with step 0's values (`init` event).
        No extra forward of the model: one under no_grad inside autocast leaves detached weight
        casts in autocast's cache, and the training forward then gets no gradients (measured)."""
        init: dict = {"input_shape": list(x.shape), "input_dtype": str(x.dtype).replace("torch.", ""),
                      "_tensors": []}
        try:
            with torch.no_grad():
                flat = x.detach().reshape(-1).float()
                weight = (torch.arange(flat.numel(), device=flat.device) % 13 - 6).float()
                init["_tensors"] = [flat.sum(), (flat * flat).sum(), (flat * weight).sum(),
                                    (flat * flat * weight * weight).sum()]
        except Exception as exc:  # an input that cannot be summed: no init signal, the run goes on
            init["error"] = repr(exc)[:300]
        return init

    def on_output(self, output) -> None:
        if isinstance(output, torch.Tensor) and self.step == 0 and not self.cur.get("out_dtype"):
            self.cur["out_dtype"] = str(output.dtype).replace("torch.", "")
            self.emit("forward_output", dtype=self.cur["out_dtype"])

    def on_autocast(self, device_type: str) -> None:
        state = (device_type, torch.is_autocast_enabled(device_type),
                 str(torch.get_autocast_dtype(device_type)).replace("torch.", ""))
        if state not in self.autocast_states:
            self.autocast_states.add(state)
            self.emit("autocast", device_type=state[0], enabled=state[1], dtype=state[2])

    def on_optimizer_pre(self, opt) -> None:
        params = [p for g in opt.param_groups for p in g["params"]]
        if id(opt) not in self.seen_optimizers:
            self.seen_optimizers.add(id(opt))
            self._describe_optimizer(opt, params)
        self.cur["lr"] = [float(g.get("lr", 0.0)) for g in opt.param_groups]
        # sparse gradients (nn.EmbeddingBag(sparse=True)) have no foreach norm: use their values
        grads = [g.coalesce().values() if g.is_sparse else g
                 for g in (p.grad for p in params) if g is not None]
        if grads and (self.cur["norm"] is None or self.cur["clip"] or self.cur["clip_value"]):
            with torch.no_grad():
                norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)).float())
            if self.cur["norm"] is None:
                self.cur["norm"] = norm
            else:
                self.cur["post_norm"] = norm  # after clipping: must equal min(norm, max_norm)

    def _describe_optimizer(self, opt, params) -> None:
        devices = sorted({str(p.device) for p in params})
        self.backend = {"xla": "xla", "tpu": "tpu", "cuda": "cuda"}.get(params[0].device.type, "cpu") \
            if params else "cpu"
        shapes = sorted(list(p.shape) for p in params)  # group order may come from a set()
        dtypes: dict[str, int] = {}
        for p in params:
            key = str(p.dtype).replace("torch.", "")
            dtypes[key] = dtypes.get(key, 0) + 1
        groups = []
        for g in opt.param_groups:
            hp = {k: _jsonable(v) for k, v in g.items() if k != "params" and k not in IMPL_FLAGS}
            hp["n_params"] = len(g["params"])
            groups.append(hp)
        self.emit("optimizer", **{"class": type(opt).__name__, "groups": groups,
                                  "param_count": int(sum(p.numel() for p in params)),
                                  "param_shapes_sha": hashlib.sha256(json.dumps(shapes).encode()).hexdigest(),
                                  "param_devices": devices, "param_dtypes": dtypes})

    def on_optimizer_post(self, skipped: bool = False) -> None:
        now = time.perf_counter()
        record = {"step": self.step, "micro_batches": len(self.cur["losses"]), "clip": self.cur["clip"],
                  "lr": self.cur["lr"], "batch_size": self.cur["batch_size"],
                  "input_devices": sorted(self.cur["input_devices"]),
                  "loss_device": self.cur["loss_device"], "wall_s": now - self.last_step_t,
                  "skipped": skipped, "counters": self.counters(),
                  "clip_value": self.cur["clip_value"], "train_modules": self.cur["train_modules"],
                  "_tensors": self.cur["losses"] + [t for t in (self.cur["norm"], self.cur["post_norm"])
                                                    if t is not None],
                  "_has_norm": self.cur["norm"] is not None,
                  "_has_post": self.cur["post_norm"] is not None,
                  "_syncs": self.xla.syncs() if self.xla else 0,
                  "_init": self.init if self.step == 0 and self.init else None}
        self.queue.append(record)
        self.last_step_t = now
        self.step += 1
        self._new_step()
        if self.step % self.read_every == 0:
            self.flush(force=False)

    # --- reading values ------------------------------------------------------------------------
    def flush(self, force: bool) -> None:
        ready = len(self.queue)
        if not force and self.xla is not None:
            syncs = self.xla.syncs()
            ready = next((i for i, r in enumerate(self.queue) if r["_syncs"] >= syncs >= 0),
                         len(self.queue))
        if not ready:
            return
        batch, self.queue = self.queue[:ready], self.queue[ready:]
        tensors = [t for r in batch for t in r["_tensors"] + (r["_init"] or {}).get("_tensors", [])]
        values = self._read(tensors)
        i = 0
        for r in batch:
            n = len(r.pop("_tensors"))
            vals = values[i:i + n]
            i += n
            init = r.pop("_init")
            if init is not None:
                k = len(init.pop("_tensors"))
                self.emit("init", **init, **dict(zip(INIT_VALUES, values[i:i + k])))
                i += k
            has_norm, has_post = r.pop("_has_norm"), r.pop("_has_post")
            r.pop("_syncs")
            r["post_clip_norm"] = vals.pop() if has_post else None
            r["grad_norm"] = vals.pop() if has_norm else None
            r["loss"] = sum(vals) if vals else None
            self.emit("step", **r)

    def _read(self, tensors: list) -> list[float]:
        if not tensors:
            return []
        lazy = [t for t in tensors if t.device.type in ("xla", "tpu")]
        if self.xla is not None and len(lazy) == len(tensors):
            return self.xla.read(tensors)
        return [float(t.float().cpu()) for t in tensors]

    def finish(self, exit_code: int, error: str | None, force_read: bool = True) -> None:
        if force_read:
            try:
                self.flush(force=True)
            except Exception as exc:  # a crashed run may hold unreadable tensors
                error = (error or "") + f"\nprobe: could not read pending values: {exc!r}"
        runtime: dict[str, Any] = {"backend": self.backend, "device_type": self.backend.upper(),
                                   "device_count": 1,
                   "spmd": False, "world_size": 1, "devices_used": 1}
        try:
            if self.xla is not None:
                runtime = self.xla.runtime(self.input_sharding)
            elif self.backend == "cuda":
                runtime.update(device_type="CUDA", device_count=torch.cuda.device_count())
            if torch.distributed.is_available() and torch.distributed.is_initialized():
                runtime["world_size"] = torch.distributed.get_world_size()
                runtime["devices_used"] = max(runtime["devices_used"], runtime["world_size"])
        except Exception as exc:
            error = (error or "") + f"\nprobe: runtime facts unavailable: {exc!r}"
        self.emit("integrity", rebound=_rebound_hooks(self))
        self.emit("end", exit_code=exit_code, error=error, wall_s=time.perf_counter() - self.t0,
                  steps=self.step, runtime=runtime, counters=self.counters(),
                  input_sharding=self.input_sharding,
                  compile_time_s=self.xla.seconds("CompileTime") if self.xla else 0.0,
                  execute_time_s=self.xla.seconds("ExecuteTime") if self.xla else 0.0)
        self.out.close()


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
    register_optimizer_step_pre_hook(lambda opt, args, kwargs: rec.on_optimizer_pre(opt))
    register_optimizer_step_post_hook(lambda opt, args, kwargs: rec.on_optimizer_post())

    orig_init = torch.optim.Optimizer.__init__

    def opt_init(self, params, defaults):
        orig_init(self, params, defaults)
        hook_root_module(rec, self)

    torch.optim.Optimizer.__init__ = opt_init  # type: ignore[method-assign]

    orig_random_seed = random.seed

    def random_seed(a=None, version=2):
        rec.on_seed("random.seed", a)
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
                rec.on_seed(_name, value)
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


_HOOK_METHODS = ("on_backward", "on_clip", "on_clip_value", "on_seed", "on_train_state", "on_forward",
                 "on_output", "on_autocast", "on_optimizer_pre", "on_optimizer_post", "flush",
                 "finish", "emit")
_ORIGINAL_METHODS = {name: Recorder.__dict__[name] for name in _HOOK_METHODS}


def _rebound_hooks(rec: Recorder) -> list[str]:
    """Recorder methods or clipping hooks that code in the run replaced after the probe set them."""
    import torch.nn.utils as nn_utils
    bad = [n for n in _HOOK_METHODS if Recorder.__dict__.get(n) is not _ORIGINAL_METHODS[n]
           or n in vars(rec)]
    bad += [f"torch.nn.utils.{n}" for n in ("clip_grad_norm_", "clip_grad_value_")
            if not getattr(getattr(nn_utils, n, None), "_gpu2tpu_probe", False)]
    return bad


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
    if best is not None:
        if getattr(rec, "root_module", None) is None:
            rec.root_module = best  # the trained model, whose weights --save-model writes
        _HOOKED.add(best)
        # A module without a forward of its own (an RL agent whose methods call its actor and
        # critic) is never called: its children that hold parameters are.
        called = [best] if type(best).forward is not torch.nn.Module.forward else \
            [c for c in best.children() if next(c.parameters(), None) is not None]
        for mod in called:
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
        self.done = True
        exec_module, callback = spec.loader.exec_module, self.callback

        def exec_then_hook(module):
            exec_module(module)
            callback()

        spec.loader.exec_module = exec_then_hook
        return spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="trace file to write (JSON lines)")
    parser.add_argument("--out-fd", type=int, default=os.environ.pop("GPU2TPU_CHANNEL_FD", None),
                        help="inherited pipe to write the trace to (default: $GPU2TPU_CHANNEL_FD)")
    parser.add_argument("--read-every", type=int, default=10, help="read values every K steps")
    parser.add_argument("--stamp", default="{}", help="JSON object copied into the start record")
    parser.add_argument("--save-model", help="write the trained module's state_dict here at the end")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- script.py ARGS | -- -m module ARGS")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given after --")
    if args.out is None and args.out_fd is None:
        parser.error("give --out FILE or --out-fd N")
    if args.out is None:
        os.set_inheritable(int(args.out_fd), False)  # the run's own subprocesses do not get it
    rec = Recorder(args.out if args.out is not None else int(args.out_fd), args.read_every)
    rec.emit("start", schema_version=SCHEMA_VERSION, probe_version=PROBE_VERSION, argv=command,
             cwd=os.getcwd(), python=sys.version.split()[0], torch=torch.__version__,
             torch_xla=_version("torch_xla"), torch_tpu=_version("torch_tpu"), libtpu=_version("libtpu"),
             env={k: os.environ[k] for k in ENV_KEYS if k in os.environ}, **json.loads(args.stamp))
    install_hooks(rec)
    harness_seed(rec)

    def on_term(signum, frame):
        rec.finish(128 + signum, f"terminated by signal {signum}", force_read=False)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    exit_code, error = 0, None
    try:
        if command[0] == "-m":
            sys.argv = command[1:]
            runpy.run_module(command[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(command)
            sys.path.insert(0, os.path.dirname(os.path.abspath(command[0])))
            runpy.run_path(command[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        if exit_code:
            error = f"SystemExit({code!r})"
    except BaseException:
        exit_code, error = 1, traceback.format_exc()
        traceback.print_exc()
    rec.finish(exit_code, error)
    if args.save_model and exit_code == 0:
        try:
            save_model(rec, args.save_model)
        except Exception as exc:  # the goal criterion reports the missing checkpoint
            print(f"gpu2tpu probe: could not save the model: {exc!r}", file=sys.stderr)
    sys.stdout.flush()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
