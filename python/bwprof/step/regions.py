"""``bwprof.region``: a part of a step the user marks, with the traffic it declares.

Inside a profiled step each region call is recorded (host clock; on a GPU also as a PyTorch
profiler range ``bwprof.region:NAME#CALL`` and an NVTX range ``NAME``, so its kernels can be found),
and becomes a row of the step's report. Outside a profiled step a region does nothing. Regions do
not nest: a region opened inside another, or one left open when the step ends, is a ValueError
naming it.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

from .. import arguments as _args

RANGE_PREFIX = "bwprof.region:"     # the profiler range of a region call: bwprof.region:NAME#CALL
_active = threading.local()


@dataclass
class RegionCall:
    """One call of a region: when it ran (host ns) and what it declared (NaN: not declared)."""

    name: str
    call: int
    start_ns: int
    end_ns: int = -1
    bytes_read: float = math.nan
    bytes_written: float = math.nan
    flops: float = math.nan
    dtype: str = "fp32"     # the compute roof it is judged against
    matrix: bool = False    # judged against the matrix units' roof


@dataclass
class Recorder:
    """The region calls of one run of a step (made by profile_step; regions find it here)."""

    gpu: bool = False
    calls: list = field(default_factory=list)
    open: RegionCall | None = None
    counts: dict = field(default_factory=dict)
    thread: int = field(default_factory=threading.get_ident)

    def __enter__(self) -> "Recorder":
        if getattr(_active, "recorder", None) is not None:
            raise ValueError("profile_step: a step is already being profiled on this thread "
                             "(profile_step does not nest)")
        _active.recorder = self
        return self

    def __exit__(self, *exc) -> None:
        _active.recorder = None

    def check_closed(self) -> None:
        """A region still open when the step ended is a ValueError naming it."""
        if self.open is not None:
            name, self.open = self.open.name, None
            raise ValueError(f"region {name!r}: opened in the step and never closed (use it as "
                             f"`with bwprof.region({name!r}, ...):`)")


def _number(name: str, value) -> float:
    if value is None:
        return math.nan
    return _args.number(name, value)  # finite and at least 0


class region:  # noqa: N801 - used as a context manager, like contextlib's lower-case ones
    """Mark a part of a profiled step: ``with bwprof.region("attention", bytes_read=..,
    bytes_written=.., flops=..):``. Its kernels (on a GPU) or its host time (on the CPU) form one
    row of the step's report, with the traffic declared here (bytes and FLOPs per call; None:
    not declared); ``dtype`` ("fp32", "fp16", "bf16") picks the compute roof and
    ``matrix_units=True`` the matrix units' one. Outside ``profile_step`` it does nothing."""

    def __init__(self, name: str, bytes_read=None, bytes_written=None, flops=None, *, dtype: str = "fp32",
                 matrix_units: bool = False):
        self.name = _args.text("name", name)
        if not self.name:
            raise ValueError("name: a region needs a name")
        if "#" in self.name:
            raise ValueError(f"name: {self.name!r} holds '#', which the profiler's range names use")
        self.bytes_read = _number("bytes_read", bytes_read)
        self.bytes_written = _number("bytes_written", bytes_written)
        self.flops = _number("flops", flops)
        self.dtype = _args.text("dtype", dtype, ("fp32", "fp16", "bf16"))
        self.matrix = _args.flag("matrix_units", matrix_units)
        self._call = None
        self._ranges = []

    def __enter__(self) -> "region":
        rec = getattr(_active, "recorder", None)
        if rec is None:
            return self
        if rec.open is not None:
            outer = rec.open.name
            rec.open = None  # the outer region is reported as the error, not left dangling
            raise ValueError(f"region {self.name!r}: opened inside region {outer!r}; regions do not "
                             f"nest (close {outer!r} first, or mark the two as one region)")
        n = rec.counts.get(self.name, 0)
        rec.counts[self.name] = n + 1
        self._call = RegionCall(self.name, n, time.perf_counter_ns(), bytes_read=self.bytes_read,
                                bytes_written=self.bytes_written, flops=self.flops, dtype=self.dtype,
                                matrix=self.matrix)
        rec.open = self._call
        if rec.gpu:
            self._ranges = _open_ranges(f"{RANGE_PREFIX}{self.name}#{n}", self.name)
        return self

    def __exit__(self, *exc) -> None:
        rec = getattr(_active, "recorder", None)
        call, self._call = self._call, None
        if rec is None or call is None:
            return None
        for close in reversed(self._ranges):
            close()
        self._ranges = []
        call.end_ns = time.perf_counter_ns()
        if rec.open is call:
            rec.open = None
            rec.calls.append(call)
        return None


def _open_ranges(range_name: str, nvtx_name: str) -> list:
    """A PyTorch profiler range and an NVTX range around a region call; returns their closers."""
    import torch

    closers = []
    rf = torch.profiler.record_function(range_name)
    rf.__enter__()
    closers.append(lambda: rf.__exit__(None, None, None))
    try:
        torch.cuda.nvtx.range_push(nvtx_name)
        closers.append(torch.cuda.nvtx.range_pop)
    except Exception:  # noqa: BLE001 - NVTX is for outside tools (nsys, ncu); the row does not need it
        pass
    return closers


def active() -> Recorder | None:
    """The recorder of the step being profiled on this thread, if any."""
    return getattr(_active, "recorder", None)
