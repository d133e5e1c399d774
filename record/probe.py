"""gpu2tpu probe: run a training script unchanged and record what it really did.

Self-contained (standard library + torch; torch_xla / torch_tpu optional). Usage:
    python probe.py --out trace.jsonl [--read-every K] -- script.py ARGS...   (or -- -m module ARGS)
Its parts: probe_counters.py, probe_hooks.py, probe_inputs.py, probe_calibration.py (copied beside
it as gpu2tpu_probe_*.py).
Lazy device tensors are kept until a sync has materialised them and read in batches, so the probe
adds no executions or compilations of its own. Format: docs/formats.md ("Trace").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import runpy
import signal
import sys
import time
import traceback
from typing import Any

import torch

if __package__:  # imported from the gpu2tpu package
    from gpu2tpu.record import probe_calibration as _calibration
    from gpu2tpu.record import probe_counters as _counters
    from gpu2tpu.record import probe_hooks as _hooks
    from gpu2tpu.record import probe_inputs as _inputs
else:  # run as a script: its parts lie beside it (gpu2tpu_probe_*.py in a run's workspace)
    try:
        import gpu2tpu_probe_calibration as _calibration
        import gpu2tpu_probe_counters as _counters
        import gpu2tpu_probe_hooks as _hooks
        import gpu2tpu_probe_inputs as _inputs
    except ImportError:
        import probe_calibration as _calibration
        import probe_counters as _counters
        import probe_hooks as _hooks
        import probe_inputs as _inputs
TpuCounters, XlaCounters, _jsonable, _version = (_counters.TpuCounters, _counters.XlaCounters,
                                                 _counters._jsonable, _counters._version)
harness_seed, install_hooks, save_model = _hooks.harness_seed, _hooks.install_hooks, _hooks.save_model
# the parts' functions as loaded: the graded code can import those modules, so rebinding any of
# them is reported like rebinding a Recorder method
_PART_FUNCTIONS = {f"{m.__name__}.{n}": (m, f) for m in (_counters, _hooks, _inputs)
                   for n, f in vars(m).items()
                   if callable(f) and getattr(f, "__module__", None) == m.__name__}

PROBE_VERSION = "1"
SCHEMA_VERSION = 1
ENV_KEYS = ("PJRT_DEVICE", "CPU_NUM_DEVICES", "XLA_USE_SPMD", "CUDA_VISIBLE_DEVICES", "TPU_NAME",
            "WORLD_SIZE", "RANK", "LOCAL_RANK", "XLA_FLAGS")
IMPL_FLAGS = ("foreach", "fused", "capturable", "differentiable")
ACCELERATOR_TYPES = ("xla", "tpu", "cuda")  # torch device types that name the run's backend
CALIBRATE_ENV = "GPU2TPU_CALIBRATE"  # record/calibration.py sets it, for calibration runs only
INIT_VALUES = ("input_sum", "input_sumsq", "input_wsum", "input_wsumsq")


class Recorder:
    def __init__(self, out: str | int, read_every: int) -> None:
        self.root_module: Any = None  # the trained model, whose weights --save-model writes
        # a path, or the inherited pipe to the supervisor, which writes trace.jsonl outside
        self.out = open(out, "a", buffering=1) if isinstance(out, str) else open(out, "w", buffering=1)
        self.read_every = max(1, read_every)
        self.t0 = time.perf_counter()
        self.last_step_t = self.t0
        self.last_step_cpu = time.process_time()  # this process's CPU seconds, every thread
        self.step = 0
        self.xla: _counters.XlaCounters | _counters.TpuCounters | None = None  # the lazy backend's counters
        self.seen_optimizers: set[int] = set()
        self.autocast_states: set[tuple] = set()
        self.scaled: dict[int, torch.Tensor] = {}
        self.queue: list[dict] = []
        self.input_sharding: str | None = None
        self.backend = "cpu"
        self.in_backward = False
        self.in_clip = False
        self.in_seed = False
        self.init: dict | None = None  # see probe_inputs.fingerprint
        self.inner_inputs = _inputs.InnerInputs(self)  # a forward handed no tensor argument
        self.shared = _inputs.SharedBackward()  # two optimizers stepped after one backward
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

    def on_seed(self, fn: str, value, by: str | None = None) -> None:
        """A seeding call; `by`: the module that made it (torch seeds each DataLoader worker from
        its own generator: `torch.utils.data._utils.worker`; the judge compares the project's)."""
        offset = int(os.environ.get("GPU2TPU_SEED_OFFSET") or 0)
        self.emit("seed", fn=fn, value=_jsonable(value), **({"offset": offset} if offset else {}),
                  **({"by": by} if by else {}))

    def on_train_state(self, module: torch.nn.Module) -> None:
        """Modules in training mode at the first training forward of each step."""
        if torch.is_grad_enabled() and self.cur["train_modules"] is None:
            mods = list(module.modules())
            self.cur["train_modules"] = [sum(1 for m in mods if m.training), len(mods)]

    def on_forward(self, module, args, kwargs) -> None:
        if not torch.is_grad_enabled():
            return  # evaluation forwards are not part of the training workload
        x = _inputs.top_level_tensor(args, kwargs)
        if x is None:  # tensors inside containers, or none: see where the network first gets them
            self.inner_inputs.arm(module, args, kwargs)
            return
        self.record_input(x)
        self.record_device(x)

    def record_input(self, x: torch.Tensor, examples: int | None = None) -> None:
        """x stands for a training forward's inputs: its batch size (or the examples the forward
        was handed), its sharding and, at step 0, its fingerprint (see probe_inputs.fingerprint)."""
        if self.step == 0 and self.init is None:
            self.init = _inputs.fingerprint(x)
        self.cur["batch_size"].append(examples or (int(x.shape[0]) if x.dim() else 1))
        if self.input_sharding is None and x.device.type == "xla" and "torch_xla" in sys.modules:
            self.input_sharding = sys.modules["torch_xla"]._XLAC._get_xla_sharding_spec(x)

    def record_device(self, x: torch.Tensor) -> None:
        """The device of a training forward's inputs, as the network gets them."""
        if self.backend == "cpu" and x.device.type in ACCELERATOR_TYPES:
            self.backend = x.device.type  # the model on the device, the optimised tensors maybe not
        self.cur["input_devices"].add(str(x.device))

    def on_output(self, output) -> None:
        self.inner_inputs.finish()  # the root forward is over
        if isinstance(output, torch.Tensor) and self.step == 0 and not self.cur.get("out_dtype"):
            self.cur["out_dtype"] = str(output.dtype).replace("torch.", "")
            self.emit("forward_output", dtype=self.cur["out_dtype"])

    def on_autocast(self, device_type: str) -> None:
        state = (device_type, torch.is_autocast_enabled(device_type),
                 str(torch.get_autocast_dtype(device_type)).replace("torch.", ""))
        if state not in self.autocast_states:
            self.autocast_states.add(state)
            self.emit("autocast", device_type=state[0], enabled=state[1], dtype=state[2])

    def on_optimizer_pre(self, opt, closure: bool = False) -> None:
        if closure:  # where this step's own closure evaluations start (see on_optimizer_post)
            self.cur["closure_from"] = (len(self.cur["losses"]), len(self.cur["batch_size"]))
        params = [p for g in opt.param_groups for p in g["params"]]
        if id(opt) not in self.seen_optimizers:
            self.seen_optimizers.add(id(opt))
            self._describe_optimizer(opt, params)
        self.cur["lr"] = [float(g.get("lr", 0.0)) for g in opt.param_groups]
        self.cur["optimizer"] = id(opt)  # which optimizer steps (see probe_inputs.SharedBackward)
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
        if params and params[0].device.type in ACCELERATOR_TYPES:
            self.backend = params[0].device.type
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
        now, cpu_now = time.perf_counter(), time.process_time()
        closure: dict[str, int] = {}
        loss_at, batch_at = self.cur.pop("closure_from", (None, None))
        if loss_at is not None and loss_at < len(self.cur["losses"]):  # LBFGS-style: the step
            # evaluates its closure as often as its line search needs; the step's loss and batch are
            # its first evaluation (a closure that evaluates nothing leaves the step as it was)
            closure["closure_calls"] = len(self.cur["losses"]) - loss_at
            self.cur["losses"] = self.cur["losses"][loss_at:loss_at + 1]
            if batch_at < len(self.cur["batch_size"]):
                self.cur["batch_size"] = self.cur["batch_size"][batch_at:batch_at + 1]
        closure.update(self.shared.step_fields(self.cur, self.cur.get("optimizer")))
        record = {"step": self.step, "micro_batches": len(self.cur["losses"]), "clip": self.cur["clip"],
                  "lr": self.cur["lr"], "batch_size": self.cur["batch_size"],
                  "input_devices": sorted(self.cur["input_devices"]),
                  "loss_device": self.cur["loss_device"], "wall_s": now - self.last_step_t,
                  "cpu_s": cpu_now - self.last_step_cpu,
                  "skipped": skipped, "counters": self.counters(),
                  "clip_value": self.cur["clip_value"], "train_modules": self.cur["train_modules"],
                  "_tensors": self.cur["losses"] + [t for t in (self.cur["norm"], self.cur["post_norm"])
                                                    if t is not None],
                  "_has_norm": self.cur["norm"] is not None,
                  "_has_post": self.cur["post_norm"] is not None,
                  "_syncs": self.xla.syncs() if self.xla else 0,
                  "_init": self.init if self.step == 0 and self.init else None, **closure}
        self.queue.append(record)
        self.last_step_t, self.last_step_cpu = now, cpu_now
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
            self.shared.read(r)
            self.emit("step", **r)

    def _read(self, tensors: list) -> list[float]:
        if not tensors:
            return []
        lazy = [i for i, t in enumerate(tensors) if t.device.type in ("xla", "tpu")]
        if self.xla is None or not lazy:
            return [float(t.float().cpu()) for t in tensors]
        # the device's values in one read of the probe's own (not counted as the run's host reads),
        # beside host tensors such as the fingerprint of a batch the model moves itself
        read = dict(zip(lazy, self.xla.read([tensors[i] for i in lazy])))
        return [read[i] if i in read else float(t.float().cpu()) for i, t in enumerate(tensors)]

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


_HOOK_METHODS = ("on_backward", "on_clip", "on_clip_value", "on_seed", "on_train_state", "on_forward",
                 "record_input", "record_device",
                 "on_output", "on_autocast", "on_optimizer_pre", "on_optimizer_post", "flush",
                 "finish", "emit")
_ORIGINAL_METHODS = {name: Recorder.__dict__[name] for name in _HOOK_METHODS}


def _rebound_hooks(rec: Recorder) -> list[str]:
    """Recorder methods or clipping hooks that code in the run replaced after the probe set them."""
    import torch.nn.utils as nn_utils
    bad = [n for n in _HOOK_METHODS if Recorder.__dict__.get(n) is not _ORIGINAL_METHODS[n]
           or n in vars(rec)]
    bad += [name for name, (module, fn) in _PART_FUNCTIONS.items()
            if getattr(module, name.rsplit(".", 1)[1], None) is not fn]
    bad += [f"torch.nn.utils.{n}" for n in ("clip_grad_norm_", "clip_grad_value_")
            if not getattr(getattr(nn_utils, n, None), "_gpu2tpu_probe", False)]
    return bad


def _hold_term() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _release_term() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _default_term() -> None:
    """A forked child (a DataLoader or Pool worker) ends on SIGTERM as it would without the probe:
    the kernel's default, with no Python run and nothing written into the run's channel. Running the
    probe's handler there wrote a second `end` record, and a worker forked after the XLA runtime
    started could hang in it instead of leaving (its parent then waits on it forever). SIGTERM is
    held across the fork: one that reached the child before this reset would be lost (CPython drops
    a Python-level signal caught before its after-fork hooks ran); held, it waits for the default."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # forked from a thread other than the main one: the handler checks the pid
        pass
    _release_term()


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
    calibrate = os.environ.pop(CALIBRATE_ENV, "")
    if calibrate:  # a reference's calibration run (record/calibration.py): its first step only
        _calibration.install_calibration(rec, calibrate)

    probe_pid = os.getpid()

    def on_term(signum, frame):
        if os.getpid() != probe_pid:  # a forked child of the run: not the run's end
            _default_term()
            os.kill(os.getpid(), signum)
            return
        rec.finish(128 + signum, f"terminated by signal {signum}", force_read=False)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    os.register_at_fork(before=_hold_term, after_in_parent=_release_term, after_in_child=_default_term)
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
