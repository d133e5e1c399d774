"""gpu2tpu probe, part 2 of 3: the lazy backend's counters (torch_xla metrics, TorchTPU's) and
JSON helpers. Copied beside the probe as gpu2tpu_probe_counters.py in a run's workspace."""

from __future__ import annotations

import torch


def _version(name: str) -> str | None:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


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


