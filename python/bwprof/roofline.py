"""The roofline model: ceilings per dtype, ridge points, and rows judged against chosen ceilings.

The judgement itself (attainable performance, efficiency, bound, grade, above-peak and the
bottleneck text) is the C++ core's, the same function every measured row went through
(``bwprof._core.judge``). This module chooses the ceilings, so an old CSV can be judged against a
newer device measurement, or a run against the datasheet::

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

from . import arguments as _args

# The core's thresholds (cpp/include/bwprof/roofline.hpp), for readers of charts and tables: under a
# quarter of the roof neither roof explains the time; 10 % above a measured peak is not noise.
LATENCY_EFFICIENCY_PCT = 25.0
ABOVE_MEASURED_FACTOR = 1.10

CEILING_COLUMNS = ["name", "dtype", "kind", "value", "unit", "source", "detail", "arithmetic"]
# memory: DRAM; l2 and l1 (L1 / shared memory): the cache levels' bandwidth, measured by bwprof's
# own kernels (bwprof.peaks()); vector and matrix: the compute roofs.
KINDS = ("memory", "vector", "matrix", "l2", "l1")
UNITS = {"memory": "GB/s", "vector": "GFLOP/s", "matrix": "GFLOP/s", "l2": "GB/s", "l1": "GB/s"}
LEVEL_NAMES = {"l2": "L2", "l1": "L1/shared"}
# The families ``roofs_for`` and ``classify(matrix_families=...)`` judge against the matrix roof
# when asked by family. By default that is the registry's answer: the variants that run a dtype on
# the matrix units (``bwprof.kernels()``: ``matrix_dtypes``). The matrix roof itself is always
# bwprof's own matrix-peak kernel's (``mma_peak``), never a GEMM of the run.
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


def _row(name, dtype, kind, value, source, detail="", arithmetic="") -> dict:
    return {"name": name, "dtype": dtype, "kind": kind, "value": float(value), "unit": UNITS[kind],
            "source": source, "detail": detail or "", "arithmetic": arithmetic}


def _text(v) -> str:
    """A text cell, "" for NaN or None (a CSV's empty cell)."""
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def _texts(df: pd.DataFrame, column: str) -> pd.Series:
    """A column's text cells ("" where empty), or "" for every row of a table without it."""
    return df[column].map(_text) if column in df else pd.Series("", index=df.index, dtype=object)


def _vector_theoretical(info: dict, arith_type: str) -> float:
    """The architecture table's vector rate of one arithmetic type, from a device's info dict."""
    table = info.get("vector_gflops_theoretical") or {}
    v = _num(table.get(arith_type)) if isinstance(table, dict) else math.nan
    return v if not math.isnan(v) else _num(info.get(f"{arith_type}_gflops_theoretical"))


def _from_peaks(dtype: str, p: dict, info: dict | None, matrix: bool = True) -> list[dict]:
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
    # The vector roof the dtype's rows are judged against: that of the arithmetic the peaks name
    # (FP32 for every dtype: bwprof.peaks()), or of the dtype itself in an older or hand-made dict.
    arith = str(p.get("compute_arithmetic") or f"{dtype} vector")
    fl = _num(p.get("gflops"))
    if not math.isnan(fl):
        rows.append(_row(f"{dtype} vector", dtype, "vector", fl, "measured",
                         str(p.get("compute_source") or "measured"), arith))
    fl_t = _num(p.get("gflops_theoretical"))
    if math.isnan(fl_t):  # the peaks' own table of that type, else the device's
        own = p["vector"].get(arith.split(" ")[0]) if isinstance(p.get("vector"), dict) else None
        fl_t = _num(own.get("gflops_theoretical")) if isinstance(own, dict) else math.nan
        fl_t = _vector_theoretical(info, arith.split(" ")[0]) if math.isnan(fl_t) else fl_t
    if not math.isnan(fl_t):
        rows.append(_row(f"{dtype} vector (theoretical)", dtype, "vector", fl_t, "theoretical", "datasheet", arith))
    # The matrix roof: bwprof's matrix-peak kernel (the peaks' matrix_gflops), and the datasheet's.
    if matrix:
        mx = _num(p.get("matrix_gflops"))
        if not math.isnan(mx):
            rows.append(_row(f"{dtype} matrix", dtype, "matrix", mx, "measured",
                             str(p.get("matrix_source") or "measured"), f"{dtype} matrix"))
        mx_t = _num(p.get("matrix_gflops_theoretical"))
        if math.isnan(mx_t):
            mx_t = _num(info.get(f"{dtype}_matrix_gflops_theoretical"))
        if not math.isnan(mx_t):
            rows.append(_row(f"{dtype} matrix (theoretical)", dtype, "matrix", mx_t, "theoretical", "datasheet",
                             f"{dtype} matrix"))
    # The cache levels (measured only: no datasheet figure).
    for kind in ("l2", "l1"):
        v = _num(p.get(f"{kind}_gbs"))
        if not math.isnan(v):
            rows.append(_row(f"{LEVEL_NAMES[kind]}", dtype, kind, v, "measured",
                             str(p.get("cache_source") or "measured")))
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
            "matrix_gflops": _mode(d["peak_matrix_gflops"]) if "peak_matrix_gflops" in d else math.nan,
            "matrix_source": _first_text(d["peak_matrix_source"]) if "peak_matrix_source" in d else "",
            "l2_gbs": _mode(d["peak_l2_gbs"]) if "peak_l2_gbs" in d else math.nan,
            "l1_gbs": _mode(d["peak_l1_gbs"]) if "peak_l1_gbs" in d else math.nan,
            "cache_source": _first_text(d["peak_cache_source"]) if "peak_cache_source" in d else "",
        }
        # A row judged against the matrix roof records it as its compute roof (an older run
        # without the matrix columns still says so there).
        if math.isnan(p["matrix_gflops"]) and "peak_compute_source" in d and "peak_gflops" in d:
            src = d["peak_compute_source"].astype(str)
            mrows = d[src.str.startswith("measured") & src.str.contains("mma_peak")]
            if len(mrows):
                p["matrix_gflops"] = _mode(mrows["peak_gflops"])
                p["matrix_source"] = _first_text(mrows["peak_compute_source"])
        if "peak_compute_source" in d and "peak_gflops" in d:  # the vector roof: rows not on the matrix units
            src = d["peak_compute_source"].astype(str)
            vrows = d[~src.str.contains("matrix") & ~src.str.contains("mma_peak")]
            # Rows that record their arithmetic: the dtype's vector roof is that of its rows' usual
            # arithmetic (a row of FP64 chains among FP32 rows does not set the FP32 roof).
            if len(vrows) and "peak_compute_arithmetic" in vrows:
                arith = vrows["peak_compute_arithmetic"].map(_text)
                usual = _first_text(arith[~arith.str.endswith("matrix")])
                if usual:
                    vrows = vrows[arith == usual]
                    p["compute_arithmetic"] = usual
            if len(vrows):
                p["gflops"] = _mode(vrows["peak_gflops"])
                p["compute_source"] = _first_text(vrows["peak_compute_source"])
        rows += _from_peaks(dt, p, info, matrix=matrix)
    return rows


def _dtypes_of(dtypes, default=("fp32", "fp16")) -> list[str]:
    if dtypes is None:
        return list(default)
    return [dtypes] if isinstance(dtypes, str) else list(dtypes)


def ceilings(source="auto", dtypes: Iterable[str] | str | None = None, *, info: dict | None = None,
             matrix: bool = True) -> pd.DataFrame:
    """The roofs per dtype: memory (GB/s), vector and matrix compute (GFLOP/s), measured and
    theoretical. Columns: name, dtype, kind (memory/vector/matrix), value, unit, source
    (measured/theoretical), detail (which kernel set it); kinds l2 and l1 (GB/s) are the cache
    levels' bandwidth where bwprof measured them. The matrix roof is bwprof's matrix-peak kernel's
    (``matrix=False`` leaves it out), never a GEMM of a run.

    ``source`` is a device (id such as "gpu:0" or a ``bwprof.Device``; its peaks are measured), a
    ``bwprof.peaks()`` dict (of ``dtypes[0]``), a dict ``{dtype: peaks dict}``, or a results
    DataFrame (its peak columns). ``info`` is the device's property dict for the theoretical compute roofs.
    """
    if dtypes is not None:
        dtypes = _args.texts("dtypes", dtypes)
        if not dtypes:
            raise ValueError("dtypes: expected at least one dtype (or None for fp32 and fp16)")
    info = _args.mapping("info", info)
    matrix = _args.flag("matrix", matrix)
    if not isinstance(source, (pd.DataFrame, dict, str)) and not (hasattr(source, "info") and hasattr(source, "id")):
        raise ValueError(f"source: expected a device id, a bwprof.Device, a peaks dict or a results DataFrame, "
                         f"got {type(source).__name__}")
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
        rows = [r for dt, p in per.items() for r in _from_peaks(dt, p, info, matrix)]
    else:
        from .api import device as _device, peaks as _peaks
        dev = source if hasattr(source, "info") and hasattr(source, "id") else _device(source)
        rows = [r for dt in _dtypes_of(dtypes) for r in _from_peaks(dt, _peaks(dev.id, dt),
                                                                     info or dev.info, matrix)]
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


def _arithmetic_of(ceil: pd.DataFrame) -> pd.Series:
    """Each ceiling's arithmetic; a table from before the column: its dtype's, by its kind."""
    a, own = _texts(ceil, "arithmetic"), ceil["dtype"].astype(str) + " " + ceil["kind"].astype(str)
    return a.where((a != "") | ~ceil["kind"].isin(["vector", "matrix"]), own)


def _pick_arithmetic(ceil: pd.DataFrame, arithmetic: str, dtype: str, prefer: str) -> tuple[float, str, float]:
    """(value, name, theoretical value) of the compute ceiling of ``arithmetic`` (the row's dtype's
    where several dtypes carry one), named by that arithmetic as the core names it ("fp32 vector",
    "fp32 vector (theoretical)"); NaN and no name where the ceilings have none."""
    kind = "matrix" if arithmetic.endswith("matrix") else "vector"
    c = ceil[(ceil["kind"] == kind) & (_arithmetic_of(ceil) == arithmetic)]
    if (c["dtype"] == dtype).any():
        c = c[c["dtype"] == dtype]
    theo = c[c["source"] == "theoretical"]["value"]
    other = "theoretical" if prefer == "measured" else "measured"
    for src in (prefer, other):
        x = c[c["source"] == src]
        if len(x):
            i = x["value"].idxmax()
            name = arithmetic + (" (theoretical)" if src == "theoretical" else "")
            return float(x.at[i, "value"]), name, float(theo.max()) if len(theo) else math.nan
    return math.nan, "", math.nan


def roofs_for(ceil: pd.DataFrame, dtype: str, family: str = "", prefer: str = "measured",
              matrix_families=MATRIX_FAMILIES, *, matrix: bool | None = None, arithmetic: str | None = None) -> dict:
    """The roofs a row of ``dtype`` is judged against: bandwidth, compute, and the theoretical ones
    that decide whether a figure is above the device's peak. With ``arithmetic`` (a row's
    ``peak_compute_arithmetic``, "fp64 vector"), the compute roof is the ceiling of that arithmetic
    alone: where the ceilings have none it is unknown (NaN, ``compute_missing``), never another's.
    Without it, the matrix roof is used when ``matrix`` is true (default: when ``family`` is in
    ``matrix_families``) and the ceilings have one, else the dtype's vector roof."""
    if matrix is None:
        matrix = family in (matrix_families or ())
    bw, bw_name = _pick(ceil, dtype, "memory", prefer)
    missing = False
    if arithmetic:
        fl, fl_name, fl_theo = _pick_arithmetic(ceil, arithmetic, dtype, prefer)
        missing = math.isnan(fl)
        if missing:
            fl_name = arithmetic
    else:
        fl, fl_name = math.nan, ""
        if matrix:
            fl, fl_name = _pick(ceil, dtype, "matrix", prefer)
        if math.isnan(fl):
            fl, fl_name = _pick(ceil, dtype, "vector", prefer)
        kind = "matrix" if "matrix" in fl_name else "vector"
        fl_t = ceil[(ceil.dtype == dtype) & (ceil.kind == kind) & (ceil.source == "theoretical")]
        fl_theo = float(fl_t["value"].max()) if len(fl_t) else math.nan
    bw_t = ceil[(ceil.dtype == dtype) & (ceil.kind == "memory") & (ceil.source == "theoretical")]
    l2, _ = _pick(ceil, dtype, "l2", "measured")
    l1, _ = _pick(ceil, dtype, "l1", "measured")
    return {"bandwidth_gbs": bw, "bandwidth_name": bw_name, "gflops": fl, "gflops_name": fl_name,
            "l2_gbs": l2, "l1_gbs": l1, "compute_missing": missing,
            "bandwidth_theoretical_gbs": float(bw_t["value"].max()) if len(bw_t) else math.nan,
            "gflops_theoretical": fl_theo}


def matrix_variants() -> set:
    """(kernel, backend kind, variant, dtype) of every variant that runs that dtype on the matrix
    units, from this build's registry."""
    from . import _core
    return {(k["name"], v["backend"], v["name"], dt) for k in _core.kernels() for v in k["variants"]
            for dt in v.get("matrix_dtypes", ())}


def _on_matrix_units(out: pd.DataFrame, matrix_families) -> pd.Series:
    """Per row: is it judged against its dtype's matrix roof?"""
    def col(name):
        return out[name].astype(str) if name in out else pd.Series("", index=out.index)
    if matrix_families is not None:  # the caller's explicit choice, by family
        return col("family").isin(list(matrix_families))
    # A measured row says which roof the core judged it against (its compute source names the
    # matrix units); a row without that record is looked up in this build's registry.
    arith = _texts(out, "peak_compute_arithmetic")  # a row that records it says it outright
    src = col("peak_compute_source").replace("nan", "")
    kind = col("backend").map(lambda b: "cpu" if b == "cpu" else "gpu")
    keys = list(zip(col("kernel"), kind, col("variant"), col("dtype")))
    known = matrix_variants() if ((src == "") & (arith == "")).any() else set()
    return pd.Series([a.endswith("matrix") if a else ("matrix" in s) if s else (k in known)
                      for a, s, k in zip(arith, src, keys)], index=out.index, dtype=bool)


def _own_roofs(out: pd.DataFrame, prefer: str, info: dict) -> list[dict]:
    """Each row's own roofs, as its record carries them (what the core judged it against)."""
    def col(name, default=math.nan):
        return pd.to_numeric(out[name], errors="coerce") if name in out else \
            pd.Series(default, index=out.index, dtype=float)
    bw, bw_t, fl = col("peak_bandwidth_gbs"), col("theoretical_bandwidth_gbs"), col("peak_gflops")
    l2, l1 = col("peak_l2_gbs"), col("peak_l1_gbs")
    src, arith, link = (_texts(out, c) for c in ("peak_compute_source", "peak_compute_arithmetic", "link"))
    dts = out["dtype"].astype(str) if "dtype" in out else pd.Series("", index=out.index)
    roofs = []
    for i in out.index:
        dt, s, a = dts[i], src[i], arith[i]
        matrix = a.endswith("matrix") if a else "matrix" in s
        units = "matrix" if matrix else "vector"
        # The arithmetic whose roof judged the row (schema 4), else its dtype's by its units.
        name = a or f"{dt} {units}"
        kind_of = (a or name).split(" ")[0]
        # A roof from the architecture table in a record is the datasheet's own; a measured roof's
        # datasheet figure comes from the device's properties (when the run was made on this
        # machine, or ``info`` says).
        if s.startswith("theoretical") and (matrix or a):
            fl_t = fl[i]
        elif matrix:
            fl_t = _num(info.get(f"{kind_of}_matrix_gflops_theoretical"))
        else:
            fl_t = _vector_theoretical(info, kind_of) if a else _num(info.get(f"{dt}_gflops_theoretical"))
        r = {"bandwidth_gbs": _num(bw[i]), "bandwidth_theoretical_gbs": _num(bw_t[i]),
             "l2_gbs": _num(l2[i]), "l1_gbs": _num(l1[i]),
             "gflops": _num(fl[i]), "gflops_theoretical": fl_t,
             "bandwidth_name": f"{dt} memory", "gflops_name": name,
             # No roof was known for the row's arithmetic (the core said "none: ..."): none is used.
             "compute_missing": s.startswith("none") and math.isnan(_num(fl[i])) and not link[i]}
        if s.startswith("theoretical"):
            r["gflops_name"] += " (theoretical)"
        if prefer == "theoretical":
            if not math.isnan(r["bandwidth_theoretical_gbs"]):
                r["bandwidth_gbs"], r["bandwidth_name"] = r["bandwidth_theoretical_gbs"], f"{dt} memory (theoretical)"
            if not math.isnan(fl_t) and not r["gflops_name"].endswith("(theoretical)"):
                r["gflops"], r["gflops_name"] = fl_t, f"{name} (theoretical)"
                r["compute_missing"] = False
        roofs.append(r)
    return roofs


def classify(df: pd.DataFrame, ceilings: pd.DataFrame | None = None, *, prefer: str = "measured",
             matrix_families=None, info: dict | None = None, rates: bool = False) -> pd.DataFrame:
    """A copy of ``df`` with ``attainable_gflops``, ``roofline_efficiency_pct``, ``bound`` and
    ``above_peak`` judged again by the core's one judgement (``bwprof._core.judge``).

    Without ``ceilings`` each row is judged against its own recorded roofs (the peak columns the
    core used when it measured the row), so ``classify(run)`` reproduces the run. With
    ``ceilings`` (from :func:`ceilings`), a row whose variant runs its dtype on the matrix units
    (the registry's answer; or, when ``matrix_families`` is given, a row of one of those families)
    is judged against its dtype's matrix roof where one exists, every other row against the vector
    roof. ``prefer`` picks measured or theoretical roofs (the other is the fallback); ``info`` is the
    device's property dict for the theoretical compute roofs. Adds ``ceiling_bandwidth_gbs``,
    ``ceiling_gflops``, ``ceiling_name``, ``ridge_flop_per_byte`` and ``roofline_note`` (the core's
    bottleneck text for the chosen roofs); ``bottleneck`` keeps the text of the measurement.
    ``rates=True`` (rows that were never judged, such as a step's kernels) also sets the rates
    and text from the judgement: ``bandwidth_gbs``, ``gflops``, ``bandwidth_pct_peak``,
    ``compute_pct_peak``, ``intensity_flop_per_byte``, ``grade`` and ``bottleneck``.
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    prefer = _args.text("prefer", prefer, ("measured", "theoretical"))
    if ceilings is not None:
        ceilings = _args.frame("ceilings", ceilings)
        missing = [c for c in CEILING_COLUMNS if c not in ceilings.columns and c != "arithmetic"]  # older tables lack it
        if missing:
            raise ValueError(f"ceilings: expected a table from bwprof.roofline.ceilings(), missing column(s) "
                             f"{', '.join(missing)}")
    if matrix_families is not None:
        matrix_families = _args.texts("matrix_families", matrix_families)
    info = _args.mapping("info", info)
    rates = _args.flag("rates", rates)
    out = df.copy()
    if not len(out):
        for c in ("attainable_gflops", "roofline_efficiency_pct", "ceiling_bandwidth_gbs", "ceiling_gflops",
                  "ridge_flop_per_byte", "attainable_bandwidth_gbs", "bandwidth_pct_attainable", "fixed_cost_pct"):
            out[c] = pd.Series(dtype=float)
        for c in ("bound", "ceiling_name", "roofline_note"):
            out[c] = pd.Series(dtype=object)
        return out

    def col(name, default=0.0):
        return pd.to_numeric(out[name], errors="coerce").fillna(default) if name in out else \
            pd.Series(default, index=out.index, dtype=float)

    flops = _flops_of(out)
    if "bytes_read" in out or "bytes_written" in out:
        nbytes = col("bytes_read") + col("bytes_written")
    else:  # a reduced table: recover the traffic from the intensity
        intensity = col("intensity_flop_per_byte", math.nan)
        nbytes = (flops / intensity.where(intensity > 0)).fillna(1.0)
    dts = out["dtype"].astype(str) if "dtype" in out else pd.Series("", index=out.index)
    if ceilings is None:
        roofs = _own_roofs(out, prefer, info if info is not None else _device_info_for(out))
    else:
        matrix = _on_matrix_units(out, matrix_families)
        # A row that records its arithmetic is judged against that arithmetic's ceiling (unless the
        # caller's matrix_families send it to the other units: then its dtype's roof of those).
        arith = _texts(out, "peak_compute_arithmetic")
        cache: dict = {}
        roofs = []
        for i in out.index:
            a = arith[i] if arith[i].endswith("matrix") == bool(matrix[i]) else ""
            key = (dts[i], bool(matrix[i]), a)
            if key not in cache:
                cache[key] = roofs_for(ceilings, key[0], prefer=prefer, matrix=key[1], arithmetic=key[2] or None)
            roofs.append(cache[key])
    # A transfer is judged against the link it crossed (its record's own roof), never a memory ceiling.
    links = _texts(out, "link")
    if ceilings is not None and (links != "").any():
        own = _own_roofs(out, prefer, info if info is not None else {})
        roofs = [own[n] if links[i] else r for n, (i, r) in enumerate(zip(out.index, roofs))]
    from . import _core
    text = (lambda name: out[name].astype(str).tolist() if name in out else "")
    j = _core.judge({
        "bytes": nbytes.astype(float).tolist(), "flops": flops.astype(float).tolist(),
        "time_us": col("time_median_us", math.nan).astype(float).tolist(),
        "bandwidth_gbs": col("bandwidth_gbs", math.nan).astype(float).tolist(),
        "gflops": col("gflops", math.nan).astype(float).tolist(),
        "dtype": dts.tolist(), "access_pattern": text("access_pattern"), "cache": text("cache"),
        "bandwidth_roof_gbs": [_zero(r["bandwidth_gbs"]) for r in roofs],
        "bandwidth_theoretical_gbs": [_zero(r["bandwidth_theoretical_gbs"]) for r in roofs],
        "gflops_roof": [_zero(r["gflops"]) for r in roofs],
        "gflops_theoretical": [_zero(r["gflops_theoretical"]) for r in roofs],
        "compute_name": [r["gflops_name"] or f"{dt} compute" for r, dt in zip(roofs, dts)],
        "link": links.tolist(),
        # The size-aware ceiling each row's record carries (its device's curve; NaN: none).
        "size_fixed_cost_us": col("size_fixed_cost_us", math.nan).astype(float).tolist(),
        "size_bandwidth_gbs": col("size_bandwidth_gbs", math.nan).astype(float).tolist(),
        "host_waited": (_as_bool(out["host_waited"]).tolist() if "host_waited" in out else None),
        "l2_roof_gbs": [_zero(r.get("l2_gbs")) for r in roofs],
        "l1_roof_gbs": [_zero(r.get("l1_gbs")) for r in roofs],
        "compute_missing": [bool(r.get("compute_missing", False)) for r in roofs],
    })
    out["attainable_gflops"] = j["attainable_gflops"]
    out["roofline_efficiency_pct"] = j["roofline_efficiency_pct"]
    out["bound"] = j["bound"]
    out["above_peak"] = j["above_peak"]
    out["attainable_bandwidth_gbs"] = j["attainable_bandwidth_gbs"]
    out["bandwidth_pct_attainable"] = j["bandwidth_pct_attainable"]
    out["fixed_cost_pct"] = j["fixed_cost_pct"]
    out["ceiling_bandwidth_gbs"] = [r["bandwidth_gbs"] for r in roofs]
    out["ceiling_gflops"] = [r["gflops"] for r in roofs]
    out["ceiling_name"] = [r["gflops_name"] for r in roofs]
    out["ridge_flop_per_byte"] = [ridge_point(r["bandwidth_gbs"], r["gflops"]) for r in roofs]
    out["roofline_note"] = j["bottleneck"]
    if rates:
        for key in ("bandwidth_gbs", "gflops", "bandwidth_pct_peak", "compute_pct_peak", "intensity_flop_per_byte",
                    "grade", "bottleneck"):
            out[key] = j[key]
    return out


def _flops_of(out: pd.DataFrame) -> pd.Series:
    """Each row's FLOPs for the core's judgement, NaN where they are unknown: a row whose
    ``flops_source`` says so (or whose count is empty, in a table that has that column). A table
    from before schema 3 (no ``flops_source``) declared every count it holds; an empty one is 0."""
    if "flops" not in out:
        return pd.Series(0.0, index=out.index, dtype=float)
    flops = pd.to_numeric(out["flops"], errors="coerce").astype(float)
    if "flops_source" not in out:
        return flops.fillna(0.0)
    unknown = out["flops_source"].astype(str).str.strip().str.lower().eq("unknown")
    return flops.mask(unknown)


def _zero(v) -> float:
    """The core's "unknown" is 0."""
    f = _num(v)
    return 0.0 if math.isnan(f) else f


def split_sweep(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the kernel rows, the intensity-sweep rows) of a results DataFrame."""
    if "kernel" not in df:
        return df, df.iloc[0:0]
    is_sweep = df["kernel"].astype(str) == SWEEP_KERNEL
    return df[~is_sweep], df[is_sweep]


__all__ = ["CEILING_COLUMNS", "LATENCY_EFFICIENCY_PCT", "LEVEL_NAMES", "MATRIX_FAMILIES", "SWEEP_KERNEL", "attainable",
           "ceilings", "classify", "matrix_variants", "ridge_point", "roofs_for", "split_sweep"]
