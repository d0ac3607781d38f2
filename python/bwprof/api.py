"""Devices, kernels and single measurements: the thin Python face of the C++ core."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import _core


@dataclass(frozen=True)
class Device:
    """A device bwprof can run on (``id`` is what ``device=`` takes: "cpu", "gpu:0")."""

    id: str
    kind: str
    name: str
    vendor: str
    arch: str
    backend: str
    info: dict = field(repr=False, compare=False, default_factory=dict)

    def peaks(self, dtype: str = "fp32", refresh: bool = False) -> dict:
        """Achievable (measured) and theoretical peaks of this device for ``dtype``."""
        return peaks(self.id, dtype, refresh)


def _device(d: dict) -> Device:
    return Device(d["id"], d["kind"], d["name"], d["vendor"], d["arch"], d["backend"], dict(d))


def devices() -> list[Device]:
    """Every device this build can use, GPUs first and the CPU last."""
    return [_device(d) for d in _core.devices()]


def device(id: str = "auto") -> Device:
    """One device: "auto" (the first GPU, else the CPU), "cpu", "gpu" or "gpu:N"."""
    if not isinstance(id, str):
        raise ValueError(f"device: expected a string such as 'cpu' or 'gpu:0', got {id!r}")
    return _device(_core.device_info(id))


def peaks(device: str = "auto", dtype: str = "fp32", refresh: bool = False) -> dict:
    """Measured peak bandwidth (best stream kernel) and compute of a device, with their sources.

    Measured once per device and process, then cached; ``refresh=True`` measures them again (and
    later measurements use the new figures)."""
    return _core.peaks(device, dtype, bool(refresh))


def kernels() -> list[dict]:
    """Every kernel: family, parameters (with defaults), dtypes, variants per backend."""
    return _core.kernels()


def columns() -> list[str]:
    """The result schema's columns, in order (the same in C++, CSV, JSON and DataFrames)."""
    return list(_core.columns())


def measure(kernel: str, *, dtype: str = "fp32", device: str = "auto", variant: str | None = None,
            cache: str = "cold", warmup: int = 2, repeats: int = 10, min_time_s: float = 0.05,
            max_repeats: int = 1000, max_time_s: float = 2.0, verify: bool = True,
            **shape: Any):
    """Time one kernel invocation and derive its rates.

    Runs ``warmup`` launches, then timed launches until at least ``repeats`` of them and
    ``min_time_s`` of kernel time (caches flushed before each when ``cache="cold"``); checks the
    output against the float64 reference when ``verify``. ``shape`` holds the kernel's parameters
    (see :func:`kernels`). Returns a Measurement; ``.to_dict()`` gives the flat record.
    """
    for name, value in (("kernel", kernel), ("dtype", dtype), ("device", device), ("cache", cache)):
        if not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {value!r}")
    if variant is not None and not isinstance(variant, str):
        raise ValueError(f"variant: expected a string or None, got {variant!r}")
    for name, value in (("warmup", warmup), ("repeats", repeats), ("max_repeats", max_repeats)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name}: expected an integer, got {value!r}")
    return _core.measure(kernel, dtype, device, variant or "", cache, warmup, repeats,
                         float(min_time_s), max_repeats, float(max_time_s), bool(verify), shape)
