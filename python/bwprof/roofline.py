"""The roofline model: ceilings per dtype, ridge points, attainable performance and the bound.

The C++ core already classifies every measured row against the peaks of its own dtype (vector
compute and the best stream kernel). This module gives the same rule a choice of ceilings, so a
GEMM can be judged against the matrix roof, an old CSV against a newer device measurement, or a
run against the datasheet::

    import bwprof, bwprof.roofline as rl
    ceil = rl.ceilings("gpu:0")                  # measured and theoretical, per dtype
    df = rl.classify(bwprof.run_suite(quick=True), ceil)

Units: bandwidth in GB/s (10^9 bytes), compute in GFLOP/s, intensity in FLOP per byte.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd

# Same threshold as the C++ core (measurement.cpp): under a quarter of the roof, neither roof
# explains the time.
LATENCY_EFFICIENCY_PCT = 25.0
# Without a datasheet peak, a figure this far above the measured peak cannot be a DRAM figure.
ABOVE_MEASURED_FACTOR = 1.10

CEILING_COLUMNS = ["name", "dtype", "kind", "value", "unit", "source", "detail"]
KINDS = ("memory", "vector", "matrix")
UNITS = {"memory": "GB/s", "vector": "GFLOP/s", "matrix": "GFLOP/s"}
# Families whose work runs on matrix units when the device has them.
MATRIX_FAMILIES = ("gemm",)
SWEEP_KERNEL = "intensity_sweep"


def _num(v) -> float:
    """A positive finite float, else NaN (0 means "unknown" in the core's peaks)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f if math.isfinite(f) and f > 0 else math.nan


def ridge_point(bw_gbs, gflops):
    """Intensity (FLOP/byte) where the bandwidth roof meets the compute roof: gflops / bw."""
    bw, fl = np.asarray(bw_gbs, dtype=float), np.asarray(gflops, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((bw > 0) & (fl > 0), fl / np.where(bw > 0, bw, 1.0), np.nan)
    return float(r) if r.ndim == 0 else r


def attainable(intensity, bw_gbs, gflops):
    """The roofline's limit in GFLOP/s at ``intensity``: min(gflops, intensity x bw)."""
    i = np.asarray(intensity, dtype=float)
    bw, fl = np.asarray(bw_gbs, dtype=float), np.asarray(gflops, dtype=float)
    r = np.minimum(fl, i * bw)
    r = np.where((bw > 0) & (fl > 0) & (i >= 0), r, np.nan)
    return float(r) if r.ndim == 0 else r


def _row(name, dtype, kind, value, source, detail="") -> dict:
    return {"name": name, "dtype": dtype, "kind": kind, "value": float(value), "unit": UNITS[kind],
            "source": source, "detail": detail or ""}


def _from_peaks(dtype: str, p: dict, info: dict | None, matrix_gflops=None) -> list[dict]:
    """Ceilings of one dtype from a ``bwprof.peaks()`` dict and a device's info dict."""
    info = info or {}
    rows = []
    bw = _num(p.get("bandwidth_gbs"))
    if not math.isnan(bw):
        src = str(p.get("bandwidth_source") or "measured")
        rows.append(_row(f"{dtype} memory", dtype, "memory", bw, "measured", src))
    bw_t = _num(p.get("bandwidth_theoretical_gbs")) if p.get("bandwidth_theoretical_gbs") else \
        _num(info.get("bandwidth_theoretical_gbs"))
    if not math.isnan(bw_t):
        rows.append(_row(f"{dtype} memory (theoretical)", dtype, "memory", bw_t, "theoretical", "datasheet"))
    fl = _num(p.get("gflops"))
    if not math.isnan(fl):
        rows.append(_row(f"{dtype} vector", dtype, "vector", fl, "measured",
                         str(p.get("compute_source") or "measured")))
    fl_t = _num(p.get("gflops_theoretical"))
    if math.isnan(fl_t):
        fl_t = _num(info.get(f"{dtype}_gflops_theoretical"))
    if not math.isnan(fl_t):
        rows.append(_row(f"{dtype} vector (theoretical)", dtype, "vector", fl_t, "theoretical", "datasheet"))
    # The measured matrix roof is the best GEMM; the core's peaks may carry it one day.
    mx = _num(matrix_gflops if matrix_gflops is not None else p.get("matrix_gflops"))
    if not math.isnan(mx):
        rows.append(_row(f"{dtype} matrix", dtype, "matrix", mx, "measured",
                         str(p.get("matrix_source") or "best GEMM")))
    mx_t = _num(info.get(f"{dtype}_matrix_gflops_theoretical"))
    if not math.isnan(mx_t):
        rows.append(_row(f"{dtype} matrix (theoretical)", dtype, "matrix", mx_t, "theoretical", "datasheet"))
    return rows


def _as_bool(s: pd.Series) -> pd.Series:
    """True/False from a bool column, or from CSV text ("True"/"False"); missing is False."""
    if s.dtype == bool:
        return s
    return s.map(lambda v: str(v).strip().lower() in ("true", "1", "yes"))


def _mode(s: pd.Series):
    s = pd.to_numeric(s, errors="coerce").dropna()
    s = s[s > 0]
    return s.mode().iloc[0] if len(s) else math.nan


def _first_text(s: pd.Series) -> str:
    s = s.dropna().astype(str)
    s = s[s != ""]
    return s.mode().iloc[0] if len(s) else ""


def _device_info_for(df: pd.DataFrame) -> dict:
    """The device's properties when the run was made on this machine (same id and name)."""
    if "device" not in df or not len(df):
        return {}
    try:
        from .api import device as _device
        d = _device(str(df["device"].iloc[0]))
    except Exception:  # another machine's run, or no core: no theoretical compute then
        return {}
    if "device_name" in df and str(df["device_name"].iloc[0]) != d.name:
        return {}
    return d.info


def _best_gemm(df: pd.DataFrame, dtype: str) -> tuple[float, str]:
    if "family" not in df or "gflops" not in df:
        return math.nan, ""
    g = df[(df["family"].astype(str).isin(MATRIX_FAMILIES)) & (df["dtype"] == dtype)]
    if "above_peak" in g:
        g = g[~_as_bool(g["above_peak"])]
    fl = pd.to_numeric(g["gflops"], errors="coerce")
    if not fl.notna().any():
        return math.nan, ""
    i = fl.idxmax()
    what = f"best GEMM: {g.at[i, 'variant']}" if "variant" in g else "best GEMM"
    if "label" in g and isinstance(g.at[i, "label"], str):
        what += f" ({g.at[i, 'label']})"
    return float(fl[i]), what


def _from_results(df: pd.DataFrame, dtypes, info: dict | None, matrix) -> list[dict]:
    info = info if info is not None else _device_info_for(df)
    rows = []
    for dt in dtypes:
        d = df[df["dtype"] == dt] if "dtype" in df else df
        if not len(d):
            continue
        p = {
            "bandwidth_gbs": _mode(d["peak_bandwidth_gbs"]) if "peak_bandwidth_gbs" in d else math.nan,
            "bandwidth_source": _first_text(d["peak_bandwidth_source"]) if "peak_bandwidth_source" in d else "",
            "bandwidth_theoretical_gbs": _mode(d["theoretical_bandwidth_gbs"])
            if "theoretical_bandwidth_gbs" in d else math.nan,
            "gflops": _mode(d["peak_gflops"]) if "peak_gflops" in d else math.nan,
            "compute_source": _first_text(d["peak_compute_source"]) if "peak_compute_source" in d else "",
        }
        mx, what = _best_gemm(df, dt) if matrix else (math.nan, "")
        # A GEMM only sets a matrix roof where it beats the vector roof (matrix units exist);
        # on a CPU the best GEMM is just a slow kernel, not a ceiling.
        has_units = not math.isnan(_num(info.get(f"{dt}_matrix_gflops_theoretical")))
        if not (has_units or (mx > p["gflops"] if not math.isnan(p["gflops"]) else False)):
            mx = math.nan
        p["matrix_source"] = what
        rows += _from_peaks(dt, p, info, matrix_gflops=mx)
    return rows


def _dtypes_of(dtypes, default=("fp32", "fp16")) -> list[str]:
    if dtypes is None:
        return list(default)
    return [dtypes] if isinstance(dtypes, str) else list(dtypes)


def ceilings(source="auto", dtypes: Iterable[str] | str | None = None, *, info: dict | None = None,
             matrix: bool = True) -> pd.DataFrame:
    """The roofs per dtype: memory (GB/s), vector and matrix compute (GFLOP/s), measured and
    theoretical. Columns: name, dtype, kind (memory/vector/matrix), value, unit, source
    (measured/theoretical), detail (which kernel set it).

    ``source`` is a device (id such as "gpu:0" or a ``bwprof.Device``; its peaks are measured), a
    ``bwprof.peaks()`` dict (of ``dtypes[0]``), a dict ``{dtype: peaks dict}``, or a results
    DataFrame (its peak columns, and its best GEMM as the matrix roof where that beats the vector
    roof). ``info`` is the device's property dict for the theoretical compute roofs.
    """
    if isinstance(source, pd.DataFrame):
        dts = _dtypes_of(dtypes, sorted(set(source["dtype"]), key=lambda d: (d != "fp32", d))
                         if "dtype" in source and len(source) else ("fp32", "fp16"))
        rows = _from_results(source, dts, info, matrix)
    elif isinstance(source, dict):
        if "bandwidth_gbs" in source or "gflops" in source:
            per = {_dtypes_of(dtypes, ("fp32",))[0]: source}
        else:
            per = {dt: source[dt] for dt in _dtypes_of(dtypes, list(source))}
        for dt, p in per.items():
            if not isinstance(p, dict):
                raise ValueError(f"ceilings: peaks of {dt} must be a dict, got {type(p).__name__}")
        rows = [r for dt, p in per.items() for r in _from_peaks(dt, p, info)]
    else:
        from .api import device as _device, peaks as _peaks
        dev = source if hasattr(source, "info") and hasattr(source, "id") else _device(source)
        rows = [r for dt in _dtypes_of(dtypes) for r in _from_peaks(dt, _peaks(dev.id, dt),
                                                                     info or dev.info)]
    return pd.DataFrame(rows, columns=CEILING_COLUMNS)


_build_ceilings = ceilings  # classify() takes a parameter of the same name


def _pick(ceil: pd.DataFrame, dtype: str, kind: str, prefer: str) -> tuple[float, str]:
    c = ceil[(ceil["dtype"] == dtype) & (ceil["kind"] == kind)]
    if not len(c):
        return math.nan, ""
    other = "theoretical" if prefer == "measured" else "measured"
    for src in (prefer, other):
        s = c[c["source"] == src]
        if len(s):
            i = s["value"].idxmax()
            return float(s.at[i, "value"]), str(s.at[i, "name"])
    return math.nan, ""


def roofs_for(ceil: pd.DataFrame, dtype: str, family: str = "", prefer: str = "measured",
              matrix_families=MATRIX_FAMILIES) -> dict:
    """The roofs a row of ``dtype``/``family`` is judged against: bandwidth, compute, and the
    theoretical ones that decide whether a figure is above the device's peak."""
    bw, bw_name = _pick(ceil, dtype, "memory", prefer)
    fl, fl_name = math.nan, ""
    if family in matrix_families:
        fl, fl_name = _pick(ceil, dtype, "matrix", prefer)
    if math.isnan(fl):
        fl, fl_name = _pick(ceil, dtype, "vector", prefer)
    kind = "matrix" if "matrix" in fl_name else "vector"
    bw_t = ceil[(ceil.dtype == dtype) & (ceil.kind == "memory") & (ceil.source == "theoretical")]
    fl_t = ceil[(ceil.dtype == dtype) & (ceil.kind == kind) & (ceil.source == "theoretical")]
    return {"bandwidth_gbs": bw, "bandwidth_name": bw_name, "gflops": fl, "gflops_name": fl_name,
            "bandwidth_theoretical_gbs": float(bw_t["value"].max()) if len(bw_t) else math.nan,
            "gflops_theoretical": float(fl_t["value"].max()) if len(fl_t) else math.nan}


def _judge(gflops, bw_achieved, intensity, flops, nbytes, r: dict) -> dict:
    """One row against one set of roofs, by the C++ core's rule (measurement.cpp)."""
    bw, fl = r["bandwidth_gbs"], r["gflops"]
    has_roofs = bw > 0 and fl > 0
    memory_side = True
    att = math.nan
    if flops > 0 and nbytes > 0 and has_roofs:
        mem_roof = intensity * bw
        memory_side = mem_roof < fl
        att = min(fl, mem_roof)
        eff = 100.0 * gflops / att if att > 0 else math.nan
    elif flops > 0 and nbytes == 0 and fl > 0:
        memory_side = False
        att = fl
        eff = 100.0 * gflops / fl
    else:  # pure data movement: the bandwidth roof alone judges it
        eff = 100.0 * bw_achieved / bw if bw > 0 else math.nan
    if math.isnan(eff):
        bound = "unknown"
    elif eff < LATENCY_EFFICIENCY_PCT:
        bound = "latency"
    else:
        bound = "memory" if memory_side else "compute"
    bw_t, fl_t = r["bandwidth_theoretical_gbs"], r["gflops_theoretical"]
    above = bool((bw_t > 0 and bw_achieved > bw_t) or
                 (not bw_t > 0 and bw > 0 and bw_achieved > ABOVE_MEASURED_FACTOR * bw) or
                 (fl_t > 0 and gflops > fl_t) or
                 (not fl_t > 0 and fl > 0 and gflops > ABOVE_MEASURED_FACTOR * fl))
    return {"attainable_gflops": att, "roofline_efficiency_pct": eff, "bound": bound, "above_peak": above}


def _note(j: dict, r: dict, bw_pct: float, fl_pct: float) -> str:
    roof = r["gflops_name"] or "compute"
    if j["above_peak"]:
        return ("above the ceiling: the figure exceeds the device's peak, so the data stayed in cache "
                "(or a faster unit than the chosen roof did the work)")
    if j["bound"] == "unknown":
        return "no roof is known for this dtype"
    if j["bound"] == "latency":
        txt = f"latency-bound: {bw_pct:.1f} % of the memory roof"
        if not math.isnan(fl_pct):
            txt += f" and {fl_pct:.1f} % of the {roof} roof"
        return txt + ("; neither roof explains the time: the kernel waits on dependencies, "
                      "launches or too few threads in flight (occupancy)")
    if j["bound"] == "memory":
        return f"memory-bound at {j['roofline_efficiency_pct']:.0f} % of the roof ({r['bandwidth_name']})"
    return f"compute-bound at {j['roofline_efficiency_pct']:.0f} % of the {roof} roof"


def classify(df: pd.DataFrame, ceilings: pd.DataFrame | None = None, *, prefer: str = "measured",
             matrix_families=MATRIX_FAMILIES) -> pd.DataFrame:
    """A copy of ``df`` with ``attainable_gflops``, ``roofline_efficiency_pct``, ``bound`` and
    ``above_peak`` recomputed against ``ceilings`` (default: the ones in ``df``'s own columns).

    Rows of ``matrix_families`` use their dtype's matrix roof where one exists; ``prefer``
    picks measured or theoretical roofs (the other is the fallback). The rule is the core's:
    latency under 25 % of the roof, else memory or compute by the side of the ridge. Adds
    ``ceiling_bandwidth_gbs``, ``ceiling_gflops``, ``ceiling_name``, ``ridge_flop_per_byte``
    and ``roofline_note`` (why, in words); ``bottleneck`` keeps the core's text.
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if prefer not in ("measured", "theoretical"):
        raise ValueError(f"prefer: expected 'measured' or 'theoretical', got {prefer!r}")
    ceil = _build_ceilings(df) if ceilings is None else ceilings
    out = df.copy()
    if not len(out):
        for c in ("attainable_gflops", "roofline_efficiency_pct", "ceiling_bandwidth_gbs", "ceiling_gflops",
                  "ridge_flop_per_byte"):
            out[c] = pd.Series(dtype=float)
        for c in ("bound", "ceiling_name", "roofline_note"):
            out[c] = pd.Series(dtype=object)
        return out

    def col(name, default=0.0):
        return pd.to_numeric(out[name], errors="coerce").fillna(default) if name in out else \
            pd.Series(default, index=out.index, dtype=float)

    flops, gflops, bw_ach = col("flops"), col("gflops"), col("bandwidth_gbs")
    if "bytes_read" in out or "bytes_written" in out:
        nbytes = col("bytes_read") + col("bytes_written")
    else:  # a reduced table: recover the traffic's presence from the intensity
        nbytes = pd.Series(1.0, index=out.index)
    intensity = col("intensity_flop_per_byte", math.nan)
    intensity = intensity.where(intensity.notna(), flops / nbytes.where(nbytes > 0))
    fams = out["family"].astype(str) if "family" in out else pd.Series("", index=out.index)
    res = []
    cache: dict = {}
    for i in out.index:
        key = (out.at[i, "dtype"], fams[i])
        if key not in cache:
            cache[key] = roofs_for(ceil, str(key[0]), key[1], prefer, matrix_families)
        r = cache[key]
        j = _judge(float(gflops[i]), float(bw_ach[i]), float(intensity[i]), float(flops[i]), float(nbytes[i]), r)
        bw_pct = 100.0 * bw_ach[i] / r["bandwidth_gbs"] if r["bandwidth_gbs"] > 0 else math.nan
        fl_pct = 100.0 * gflops[i] / r["gflops"] if r["gflops"] > 0 and flops[i] > 0 else math.nan
        j.update(ceiling_bandwidth_gbs=r["bandwidth_gbs"], ceiling_gflops=r["gflops"],
                 ceiling_name=r["gflops_name"], ridge_flop_per_byte=ridge_point(r["bandwidth_gbs"], r["gflops"]),
                 roofline_note=_note(j, r, bw_pct, fl_pct))
        res.append(j)
    res = pd.DataFrame(res, index=out.index)
    for c in res.columns:
        out[c] = res[c]
    return out


def split_sweep(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the kernel rows, the intensity-sweep rows) of a results DataFrame."""
    if "kernel" not in df:
        return df, df.iloc[0:0]
    is_sweep = df["kernel"].astype(str) == SWEEP_KERNEL
    return df[~is_sweep], df[is_sweep]


__all__ = ["CEILING_COLUMNS", "LATENCY_EFFICIENCY_PCT", "MATRIX_FAMILIES", "SWEEP_KERNEL", "attainable",
           "ceilings", "classify", "ridge_point", "roofs_for", "split_sweep"]
