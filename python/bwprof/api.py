"""Devices, kernels and single measurements: the thin Python face of the C++ core."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from . import _core
from . import arguments as _args
from . import display as _display
from . import spread as _spread

_display.install()  # a Measurement shows as a table with its verdict in Jupyter


class HierarchyOrderWarning(UserWarning):
    """A device's memory hierarchy measured out of order: an inner level (L1, shared memory, L2)
    slower than the level outside it (L2, DRAM) even after bwprof measured the levels again. The
    figures are kept as measured and flagged (``peaks()["hierarchy_disorder"]``, the
    ``hierarchy_disorder`` column of :func:`peak_table`); a level's roof is then not what its
    name says (a kernel that does not reach that level's bandwidth, or a machine busy with other work)."""


# How a timed run is made: one launch (after a flush when cold), or the steady state of back-to-back
# launches over rotated inputs (see measure).
TIMINGS = ("single", "graph")


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
    return _device(_core.device_info(_args.text("device", id)))


def peaks(device: str = "auto", dtype: str = "fp32", refresh: bool = False) -> dict:
    """Measured peak bandwidth (best stream kernel) and compute of a device, with their sources,
    and the size-aware memory ceiling (``size_curve``: ``lines``, one per access pattern, the clean
    read's and the copy's, each with its fixed cost ``t0_us``, asymptotic ``bandwidth_gbs``,
    ``residual_pct`` (RMS) and ``max_error_pct`` (worst point); the measured ``points``; at the top
    the read line's ``t0_us`` and ``bandwidth_gbs`` and the worst line's errors).

    For ``dtype`` ("fp32" or "fp16"): ``bandwidth_gbs``, ``gflops`` (vector units),
    ``matrix_gflops`` (the matrix units; FP16 only), ``l2_gbs`` and ``l1_gbs`` (cache levels),
    each with its theoretical figure and source. Whatever ``dtype``, ``matrix`` and ``vector`` map
    each arithmetic type (fp16, bf16, tf32, fp8, int8; fp32, fp16, fp64) to its measured
    ``gflops``, ``gflops_theoretical`` and ``source``, and ``levels`` each cache level ("l2", "l1",
    "shared") to ``read_gbs``, ``rw_gbs``, ``working_set_bytes`` and ``source``; 0 with source
    "none" where the device has no such roof. :func:`peak_table` puts them in one DataFrame.

    ``gflops`` is the roof of what a row of ``dtype`` computes by default, named by
    ``compute_arithmetic``: "fp32 vector" for every dtype (bwprof's kernels compute FP16 and BF16 data
    in FP32); the FP16 and BF16 chains' own roofs (packed HFMA2 on a GPU) are ``vector["fp16"]`` and
    ``vector["bf16"]``.

    The hierarchy is checked: an inner level measured slower than an outer one (L1 or shared memory
    below the L2, the L2 below DRAM) is measured again once; still out of order, each pair is listed
    in ``hierarchy_disorder`` (``inner``, ``outer``, ``inner_gbs``, ``outer_gbs``, ``text``) and a
    :class:`HierarchyOrderWarning` says so (empty list: in order).

    Measured once per device and process, then cached; ``refresh=True`` measures them again (and
    later measurements use the new figures)."""
    p = _core.peaks(_args.text("device", device), _args.text("dtype", dtype), _args.flag("refresh", refresh))
    warn_hierarchy(p, device)
    return p


def warn_hierarchy(p: dict, device: str = "") -> None:
    """A :class:`HierarchyOrderWarning` for a peaks dict whose hierarchy is out of order."""
    found = p.get("hierarchy_disorder") or []
    if found:
        where = f"{device}: " if device else ""
        warnings.warn(HierarchyOrderWarning(
            f"{where}memory hierarchy out of order after a second measurement: "
            + "; ".join(f["text"] for f in found)
            + " (an inner level slower than the one outside it: its roof is not that level's bandwidth)"),
            stacklevel=3)


PEAK_TABLE_COLUMNS = ["kind", "type", "measured", "theoretical", "pct_of_theoretical", "unit", "source",
                      "hierarchy_disorder"]
# The peaks' names of the memory levels, as the table's (kind, type) rows spell them.
_LEVEL_ROWS = {"dram": ("memory", "dram"), "l2": ("cache", "l2"), "l1": ("cache", "l1"), "shared": ("cache", "shared")}


def peak_table(device: str = "auto", refresh: bool = False):
    """Every roof of a device as a DataFrame, one row each: memory (DRAM, the best stream kernel),
    the cache levels (L2, L1, shared memory: read and read+write), the vector units (fp32, fp16,
    bf16, fp64) and the matrix units (fp16, bf16, tf32, fp8, int8), measured by bwprof's own kernels beside
    the architecture table's figure (NaN where it has none). Columns: kind, type, measured,
    theoretical, pct_of_theoretical, unit (GB/s, GFLOP/s, GOP/s), source, hierarchy_disorder (True on
    the rows of a memory level measured out of order with its neighbour even after a second
    measurement: see :func:`peaks`; a :class:`HierarchyOrderWarning` says so)."""
    import math

    import pandas as pd

    p = peaks(device, "fp32", refresh)
    nan = math.nan

    def num(v):
        return float(v) if v and float(v) > 0 else nan

    rows = [("memory", "dram", num(p["bandwidth_gbs"]), num(p["bandwidth_theoretical_gbs"]), "GB/s",
             p["bandwidth_source"] or "none")]
    for level, f in sorted(p["levels"].items(), key=lambda kv: ("l2", "l1", "shared").index(kv[0])
                           if kv[0] in ("l2", "l1", "shared") else 9):
        rows.append(("cache", f"{level} read", num(f["read_gbs"]), nan, "GB/s", f["source"]))
        if level != "l1":
            rows.append(("cache", f"{level} rw", num(f["rw_gbs"]), nan, "GB/s", f["source"]))
    order = ("fp32", "fp16", "bf16", "tf32", "fp8", "int8", "fp64")
    for kind in ("vector", "matrix"):
        for t, f in sorted(p[kind].items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99):
            rows.append((kind, t, num(f["gflops"]), num(f["gflops_theoretical"]), "GOP/s" if t == "int8" else "GFLOP/s",
                         f["source"]))
    out_of_order = {name for f in p.get("hierarchy_disorder") or [] for name in (f["inner"], f["outer"])}

    def disordered(kind, t):
        return any(kind == _LEVEL_ROWS[n][0] and t.split(" ")[0] == _LEVEL_ROWS[n][1]
                   for n in out_of_order if n in _LEVEL_ROWS)

    df = pd.DataFrame([{"kind": k, "type": t, "measured": m, "theoretical": th,
                        "pct_of_theoretical": 100.0 * m / th if th == th and m == m else nan, "unit": u, "source": s,
                        "hierarchy_disorder": disordered(k, t)}
                       for k, t, m, th, u, s in rows], columns=PEAK_TABLE_COLUMNS)
    return df


def kernels() -> list[dict]:
    """Every kernel: family, parameters (with defaults), dtypes, variants per backend."""
    return _core.kernels()


def columns() -> list[str]:
    """The result schema's columns, in order (the same in C++, CSV, JSON and DataFrames)."""
    return list(_core.columns())


def measure(kernel: str, *, dtype: str = "fp32", device: str = "auto", variant: str | None = None,
            cache: str = "cold", warmup: int = 2, repeats: int = 10, min_time_s: float = 0.05,
            max_repeats: int = 1000, max_time_s: float = 2.0, verify: bool = True,
            timing: str = "single", max_total_s: float = 120.0, target_rel_spread: float | None = None,
            **shape: Any):
    """Time one kernel invocation and derive its rates.

    Runs ``warmup`` launches, then timed launches until at least ``repeats`` of them and
    ``min_time_s`` of kernel time (caches flushed before each when ``cache="cold"``); checks the
    output against the float64 reference when ``verify``. ``shape`` holds the kernel's parameters
    (see :func:`kernels`). Returns a Measurement; ``.to_dict()`` gives the flat record.

    ``target_rel_spread`` (None: no target; else a fraction in (0, 1], 0.02 for 2 %) stops on noise,
    as nvbench's stopping criterion does: past ``repeats`` and ``min_time_s`` the repeats go on until
    the samples' relative spread (the row's ``time_cv``, std / mean, from 5 samples) is at most the
    target, within ``max_repeats``, ``max_time_s`` and ``max_total_s``. The row records
    ``target_rel_spread`` and ``spread_target_met``; where the budget ran out first, a
    :class:`bwprof.SpreadTargetWarning` says so. A timed run the GPU's clock says was throttled is
    timed again (up to ``repeats`` times a call): ``throttled_retaken`` counts them,
    ``throttled_samples`` the throttled ones kept once the re-takes ran out.

    ``timing="graph"`` times the steady state instead of one launch: many launches back to back
    (captured once in a CUDA/HIP graph on a GPU) over copies of the kernel's buffers used in turn,
    as many as make them together exceed twice the last-level cache with ``cache="cold"`` (one
    set with ``cache="hot"``), no flush, the time of each run divided among its launches. Work
    that cannot be captured in a graph raises ValueError naming the kernel.

    ``max_total_s`` bounds the whole call (default 120 s; ``math.inf`` lifts it), as the bound on
    one launch (60 s on the CPU, 10 s on a GPU) bounds each launch: the first launch, timed to the
    end of its work, times the launches still to come (the warm-up and ``repeats``), and an estimate
    past the bound is a ValueError before they run, saying how to allow it. The estimate counts the
    minimum repeats only: those a spread target adds, and throttled runs timed again, stop where the
    call would pass the bound.

    Counts take any integral type; ``repeats`` and ``max_repeats`` are 1 .. 10^6, ``warmup``
    0 .. 10^5, the times finite seconds from 0 to one day. Shape values are ints (any integral
    type, or a float without a fraction), bools or strings. A bad argument is a ValueError that
    names it.
    """
    kernel = _args.text("kernel", kernel)
    dtype = _args.text("dtype", dtype)
    device = _args.text("device", device)
    variant = _args.optional_text("variant", variant)
    cache = _args.text("cache", cache, ("cold", "hot"))
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, _args.MAX_REPEATS)
    max_repeats = _args.count("max_repeats", max_repeats, 1, _args.MAX_REPEATS)
    if max_repeats < repeats:
        raise ValueError(f"max_repeats: must be at least repeats ({repeats}), got {max_repeats}")
    min_time_s = _args.seconds("min_time_s", min_time_s)
    max_time_s = _args.seconds("max_time_s", max_time_s)
    verify = _args.flag("verify", verify)
    timing = _args.text("timing", timing, TIMINGS)
    from .usercode import bound_seconds
    max_total_s = bound_seconds("max_total_s", max_total_s)
    target_rel_spread = _spread.target("target_rel_spread", target_rel_spread)
    params = {_args.text("shape parameter name", k): _args.shape_value(k, v) for k, v in shape.items()}
    m = _core.measure(kernel, dtype, device, variant or "", cache, warmup, repeats,
                      min_time_s, max_repeats, max_time_s, verify, params, timing, max_total_s, target_rel_spread)
    _spread.check(m, "measure")  # the budget ran out before the target: said once
    return m


def explain(kernel: str, *, dtype: str = "fp32", device: str = "auto", variant: str | None = None,
            **shape: Any) -> str:
    """What the kernel's instance for these arguments runs, where its variant chooses among kernels:
    e.g. ``"wgmma 128x128 splits 2 by slots cluster 2 sharing B (...)"`` for the ``tensor`` GEMM on
    Hopper, the attention kernel and its key split, the Q4_0 kernel. Empty where there is no choice.
    The arguments are those of :func:`measure` (checked the same way); the instance is made (its
    buffers allocated) but never launched. Use it to see what a parameter such as ``tile`` or
    ``splits`` changed, or what the dispatch chose at ``auto``.
    """
    kernel = _args.text("kernel", kernel)
    dtype = _args.text("dtype", dtype)
    device = _args.text("device", device)
    variant = _args.optional_text("variant", variant)
    params = {_args.text("shape parameter name", k): _args.shape_value(k, v) for k, v in shape.items()}
    return _core.explain(kernel, dtype, device, variant or "", params)
