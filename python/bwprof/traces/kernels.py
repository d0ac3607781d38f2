"""A program's kernels on the measured roofline, from a profiler's counters: per kernel (name and
launch shape) its time, the DRAM bytes and FLOPs the counters saw, GB/s, % of bwprof's measured
peaks and its bound, judged by the core's one judgement (``bwprof._core.judge``), as a DataFrame
the roofline chart takes.

    t = traces.read("ncu_raw.csv")                     # ncu --counters bandwidth, rocprofv3 --pmc ...
    k = traces.kernel_roofline(t, peaks=bwprof.peaks("gpu"))
    bwprof.plots.roofline(k, ceilings=traces.roofline_ceilings(bwprof.peaks("gpu"), k))

FLOPs come from the counters where they were collected (ncu: the SASS add/mul/fma counts per
precision; rocprofv3: SQ_INSTS_VALU_{ADD,MUL,FMA,TRANS}_F{16,32,64} and the MFMA ops). A kernel
that used the tensor cores, whose FLOPs ncu's instruction counts do not hold, has its FLOPs
unknown, as does every kernel of a trace without FLOP counters: such rows get a bound only where
their bandwidth proves it (docs/roofline.md).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .analysis import dram_bytes
from .categories import categorize

# (column, FLOPs per count) per arithmetic type. ncu counts thread instructions (an FMA is two
# FLOPs); rocprofv3's VALU counts are per wave of 64 lanes, its MFMA counts in units of 512 FLOPs
# (rocprof-compute's roofline weights).
NCU_FLOPS = {
    "fp64": (("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1.0),
             ("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1.0),
             ("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2.0)),
    "fp32": (("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1.0),
             ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1.0),
             ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.0)),
    "fp16": (("smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1.0),
             ("smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 1.0),
             ("smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 2.0)),
}
# Tensor-pipe activity: ncu counts no FLOPs for it, so a kernel that has some has unknown FLOPs.
NCU_TENSOR = "sm__pipe_tensor_cycles_active.sum"
ROCPROF_FLOPS = {
    prec: tuple((f"SQ_INSTS_VALU_{op}_{suffix}", 64.0 * (2.0 if op == "FMA" else 1.0))
                for op in ("ADD", "MUL", "FMA", "TRANS"))
    for prec, suffix in (("fp64", "F64"), ("fp32", "F32"), ("fp16", "F16"))
}
ROCPROF_MFMA = {"fp16": ("SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ_INSTS_VALU_MFMA_MOPS_BF16"),
                "fp32": ("SQ_INSTS_VALU_MFMA_MOPS_F32",), "fp64": ("SQ_INSTS_VALU_MFMA_MOPS_F64",)}
MFMA_FLOPS_PER_COUNT = 512.0

# The counters each tool is asked for when FLOPs are wanted (profilers.py builds its sets from these).
NCU_FLOP_METRICS = [c for cols in NCU_FLOPS.values() for c, _ in cols] + [NCU_TENSOR]
ROCPROF_FLOP_COUNTERS = [c for cols in ROCPROF_FLOPS.values() for c, _ in cols] + \
    [c for cols in ROCPROF_MFMA.values() for c in cols]

FLOPS_HINT = "collect FLOP counters (bwprof profile --counters roofline)"

KERNEL_COLUMNS = [
    "kernel", "kernel_name", "family", "label", "calls", "time_total_us", "time_median_us", "pct_gpu_time",
    "bytes_read", "bytes_written", "bytes_source", "flops", "flops_source", "dtype", "matrix_units",
    "bandwidth_gbs", "bandwidth_pct_peak", "gflops", "compute_pct_peak", "intensity_flop_per_byte",
    "attainable_gflops", "roofline_efficiency_pct", "bound", "grade", "above_peak", "bottleneck",
    "peak_bandwidth_gbs", "peak_gflops", "peak_compute_source",
]

_LAUNCH = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce").astype(float) if col in df else \
        pd.Series(np.nan, index=df.index, dtype=float)


def _flops_by_type(t: pd.DataFrame) -> tuple[dict, pd.Series, pd.Series, pd.Series]:
    """Per dispatch: {type: FLOPs} from whichever counters are present, whether any FLOP counter was
    collected, whether its FLOPs cannot be counted (tensor-pipe work, which ncu's instruction counts
    leave out), and whether it ran on the matrix units (rocprofv3's MFMA counts)."""
    per = {}
    zero = pd.Series(0.0, index=t.index)
    present = pd.Series(False, index=t.index)
    matrix = pd.Series(False, index=t.index)
    for table, mfma in ((NCU_FLOPS, {}), (ROCPROF_FLOPS, ROCPROF_MFMA)):
        for prec, cols in table.items():
            have = [(c, w) for c, w in cols if c in t]
            extra = [c for c in mfma.get(prec, ()) if c in t]
            if not have and not extra:
                continue
            total = sum((_num(t, c).fillna(0.0) * w for c, w in have), zero)
            for c in extra:
                ops = _num(t, c).fillna(0.0) * MFMA_FLOPS_PER_COUNT
                matrix |= ops > 0
                total = total + ops
            per[prec] = per.get(prec, zero) + total
            present |= pd.concat([_num(t, c) for c, _ in have] + [_num(t, c) for c in extra], axis=1).notna().any(axis=1)
    uncounted = _num(t, NCU_TENSOR).fillna(0.0) > 0
    return per, present, uncounted, matrix


def _launch_text(r) -> str:
    """ "grid 16384, block 32x4": the launch shape that tells two uses of one kernel apart."""
    parts = []
    for what in ("grid", "block"):
        dims = [int(r[f"{what}_{a}"]) for a in "xyz" if f"{what}_{a}" in r and pd.notna(r[f"{what}_{a}"])]
        while len(dims) > 1 and dims[-1] == 1:
            dims.pop()
        if dims:
            parts.append(f"{what} {'x'.join(map(str, dims))}")
    return ", ".join(parts)


def _peak(p: dict, key: str) -> float:
    try:
        v = float(p.get(key) or 0)
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) and v > 0 else 0.0


def _compute_roof(peaks: dict, dtype: str, matrix: bool) -> tuple[float, float, str, str]:
    """(roof, datasheet roof, words for the text, source) of ``dtype`` on the vector or matrix units,
    from a ``bwprof.peaks()`` dict (its ``vector``/``matrix`` maps; its own ``gflops`` for fp32)."""
    units = "matrix" if matrix else "vector"
    entry = (peaks.get(units) or {}).get(dtype) or {}
    fl, fl_t = _peak(entry, "gflops"), _peak(entry, "gflops_theoretical")
    src = str(entry.get("source") or "")
    if not fl and not matrix and dtype == "fp32":
        fl, fl_t, src = _peak(peaks, "gflops"), _peak(peaks, "gflops_theoretical"), str(peaks.get("compute_source") or "")
    if not fl and matrix and dtype == "fp16":
        fl, fl_t, src = _peak(peaks, "matrix_gflops"), _peak(peaks, "matrix_gflops_theoretical"), \
            str(peaks.get("matrix_source") or "")
    if not fl and fl_t:
        fl, src = fl_t, f"theoretical:{dtype}_{units}"
    name = f"{dtype} {units}" + (" (theoretical)" if src.startswith("theoretical") else "")
    return fl, fl_t, name, src or "none"


def _size_line(peaks: dict, write_fraction: float) -> tuple[float, float]:
    """(t0_us, bandwidth_gbs) of the size curve's line nearest the row's write fraction; NaN: none."""
    lines = ((peaks.get("size_curve") or {}).get("lines") or []) if isinstance(peaks.get("size_curve"), dict) else []
    good = [ln for ln in lines if _peak(ln, "bandwidth_gbs") and math.isfinite(float(ln.get("t0_us", math.nan)))]
    if not good:
        return math.nan, math.nan
    ln = min(good, key=lambda ln: abs(float(ln.get("write_fraction") or 0.0) - write_fraction))
    return float(ln["t0_us"]), float(ln["bandwidth_gbs"])


def kernel_roofline(trace: pd.DataFrame, peaks: dict | None = None) -> pd.DataFrame:
    """One row per kernel (name and launch shape) of a trace with DRAM counters: calls, time (total
    and per call, from the trace's durations), DRAM bytes per call, FLOPs per call (``flops_source``
    "counters", or "unknown" where no FLOP counter was collected or the kernel used tensor cores
    that ncu's counts leave out), the dominant arithmetic type as ``dtype``, and the core's
    judgement against ``peaks`` (a ``bwprof.peaks()`` dict: measured bandwidth, the vector and
    matrix roofs per type, the size curve, the cache levels; None: no roofs, bound "unknown").
    Sorted by total time, largest first. Kernels without DRAM counters are left out."""
    if not isinstance(trace, pd.DataFrame):
        raise ValueError(f"trace: expected a DataFrame from bwprof.traces.read, got {type(trace).__name__}")
    if peaks is not None and not isinstance(peaks, dict):
        raise ValueError(f"peaks: expected a bwprof.peaks() dict or None, got {type(peaks).__name__}")
    peaks = peaks or {}
    t = dram_bytes(trace)
    if not len(t) or not (t["dram_bytes_read"].notna() | t["dram_bytes_written"].notna()).any():
        raise ValueError("trace: no DRAM counters (ncu dram__bytes_read.sum/dram__bytes_write.sum, rocprofv3 "
                         "FETCH_SIZE/WRITE_SIZE); profile with --counters bandwidth")
    t = t[t["dram_bytes_read"].notna() | t["dram_bytes_written"].notna()].copy()
    t["_dur_ns"] = _num(t, "duration_ns")
    t["_calls"] = _num(t, "calls").fillna(1.0)
    per, present, uncounted, matrix = _flops_by_type(t)
    types = list(per)
    for prec in types:
        t[f"_fl_{prec}"] = per[prec]
    t["_fl_ok"] = present & ~uncounted
    t["_uncounted"] = uncounted
    t["_mfma"] = matrix
    t["_category"] = categorize(t)["category"]
    keys = ["kernel_name"] + [c for c in _LAUNCH if c in t]
    agg = {"short_name": ("short_name", "first"), "calls": ("_calls", "sum"), "dur": ("_dur_ns", "sum"),
           "rd": ("dram_bytes_read", "sum"), "wr": ("dram_bytes_written", "sum"), "ok": ("_fl_ok", "all"),
           "uncounted": ("_uncounted", "any"), "mfma": ("_mfma", "any"), "category": ("_category", "first")}
    for prec in types:
        agg[f"fl_{prec}"] = (f"_fl_{prec}", "sum")
    g = t.groupby(keys, sort=False, dropna=False).agg(**agg).reset_index()
    g = g[g["dur"] > 0]
    total_ns = float(g["dur"].sum())

    rows = []
    for _, r in g.iterrows():
        calls = float(r["calls"]) or 1.0
        time_us = r["dur"] / calls / 1e3
        rd, wr = r["rd"] / calls, r["wr"] / calls
        fl_types = {p: float(r[f"fl_{p}"]) / calls for p in types}
        flops = sum(fl_types.values()) if r["ok"] and types else math.nan
        dtype = max(fl_types, key=fl_types.get) if fl_types and any(v > 0 for v in fl_types.values()) else "fp32"
        matrix = bool(r["mfma"])
        launch = _launch_text(r)
        rows.append({"kernel": str(r["short_name"]), "kernel_name": str(r["kernel_name"]),
                     "family": str(r["category"]), "label": launch, "calls": int(calls),
                     "time_total_us": r["dur"] / 1e3, "time_median_us": time_us,
                     "pct_gpu_time": 100.0 * r["dur"] / total_ns if total_ns else math.nan,
                     "bytes_read": rd, "bytes_written": wr, "bytes_source": "counters", "flops": flops,
                     "flops_source": "counters" if not math.isnan(flops) else "unknown", "dtype": dtype,
                     "matrix_units": matrix, "_uncounted": bool(r["uncounted"])})
    out = pd.DataFrame(rows)
    if not len(out):
        return pd.DataFrame(columns=KERNEL_COLUMNS)
    roofs = [_compute_roof(peaks, dt, mx) for dt, mx in zip(out["dtype"], out["matrix_units"])]
    nbytes = (out["bytes_read"] + out["bytes_written"]).astype(float)
    wfrac = (out["bytes_written"] / nbytes.where(nbytes > 0)).fillna(0.0)
    lines = [_size_line(peaks, w) for w in wfrac]
    hints = ["its tensor-core FLOPs are not in ncu's instruction counts; pass its FLOPs to bwprof.profile to "
             "judge it" if u else FLOPS_HINT for u in out["_uncounted"]]
    from .. import _core
    n = len(out)
    j = _core.judge({
        "bytes": nbytes.tolist(), "flops": out["flops"].astype(float).tolist(),
        "time_us": out["time_median_us"].astype(float).tolist(), "dtype": out["dtype"].tolist(),
        "cache": "", "bandwidth_roof_gbs": [_peak(peaks, "bandwidth_gbs")] * n,
        "bandwidth_theoretical_gbs": [_peak(peaks, "bandwidth_theoretical_gbs")] * n,
        "gflops_roof": [r[0] for r in roofs], "gflops_theoretical": [r[1] for r in roofs],
        "compute_name": [r[2] for r in roofs], "flops_hint": hints,
        "size_fixed_cost_us": [ln[0] for ln in lines], "size_bandwidth_gbs": [ln[1] for ln in lines],
        "l2_roof_gbs": [_peak(peaks, "l2_gbs")] * n, "l1_roof_gbs": [_peak(peaks, "l1_gbs")] * n,
    })
    t_s = out["time_median_us"] * 1e-6
    out["bandwidth_gbs"] = nbytes / t_s / 1e9
    out["gflops"] = out["flops"] / t_s / 1e9
    for k in ("bandwidth_pct_peak", "compute_pct_peak", "intensity_flop_per_byte", "attainable_gflops",
              "roofline_efficiency_pct", "bound", "grade", "above_peak", "bottleneck"):
        out[k] = j[k]
    out["peak_bandwidth_gbs"] = _peak(peaks, "bandwidth_gbs") or math.nan
    out["peak_gflops"] = [r[0] or math.nan for r in roofs]
    out["peak_compute_source"] = [r[3] for r in roofs]
    out = out.sort_values("time_total_us", ascending=False, kind="stable").reset_index(drop=True)
    return out[KERNEL_COLUMNS]


def roofline_ceilings(peaks: dict, kernels: pd.DataFrame | None = None) -> pd.DataFrame:
    """The roofs to draw ``kernels`` against: for each arithmetic type they use (fp32 without them),
    the measured memory roof and that type's vector roof, and its matrix roof where a kernel ran on
    the matrix units, from a ``bwprof.peaks()`` dict."""
    from .. import roofline as rl

    if not isinstance(peaks, dict):
        raise ValueError(f"peaks: expected a bwprof.peaks() dict, got {type(peaks).__name__}")
    dtypes = ["fp32"] if kernels is None or not len(kernels) else list(dict.fromkeys(kernels["dtype"].astype(str)))
    per = {}
    for dt in dtypes:
        fl, fl_t, _, src = _compute_roof(peaks, dt, False)
        mx, mx_t, _, msrc = _compute_roof(peaks, dt, True)
        matrix = kernels is not None and len(kernels) and \
            bool(kernels.loc[kernels["dtype"].astype(str) == dt, "matrix_units"].any())
        per[dt] = dict(peaks, gflops=fl, gflops_theoretical=fl_t, compute_source=src,
                       matrix_gflops=mx if matrix else 0.0, matrix_gflops_theoretical=mx_t if matrix else 0.0,
                       matrix_source=msrc)
    return rl.ceilings(per, dtypes=dtypes)


__all__ = ["FLOPS_HINT", "KERNEL_COLUMNS", "NCU_FLOP_METRICS", "ROCPROF_FLOP_COUNTERS", "kernel_roofline",
           "roofline_ceilings"]
