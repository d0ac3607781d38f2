"""The data of each part of the HTML report, computed here from bwprof's own pieces (the roofs the
static roofline draws, the core's judgement through ``roofline.classify``, the size-curve lines of
the size chart, the dtype pairs of the comparison chart, the trace analysis's breakdown), so that
the page's script only draws and filters: it computes no figure of its own."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import roofline as rl
from ..plots import comparison as _cmp
from ..plots.figure import NoData
from ..plots.roofline_chart import _levels, _roofs
from ..plots.size_chart import _lines_of
from ..plots.style import _CATEGORY_COLORS, _color

# Memory levels the roofline's x axis can be read against: the bytes the kernel declares (every
# row has them) and the bytes counters saw at DRAM and at L2, where a row carries them (a step
# report joined with ncu or rocprof counters; traces.join_counters). Each level: its label, the
# columns of its read and written bytes (a single total column is the fallback) and the row's roof
# column for that level's bandwidth.
LEVELS = {
    "declared": ("declared bytes (the kernel's traffic)", ("bytes_read", "bytes_written"), None,
                 "peak_bandwidth_gbs"),
    "dram": ("DRAM bytes (counters)", ("dram_bytes_read", "dram_bytes_written"), "dram_bytes",
             "peak_bandwidth_gbs"),
    "l2": ("L2 bytes (counters)", ("l2_bytes_read", "l2_bytes_written"), "l2_bytes", "peak_l2_gbs"),
}


def _n(df: pd.DataFrame, col: str) -> pd.Series:
    if col not in df:
        return pd.Series(np.nan, index=df.index, dtype=float)
    return pd.to_numeric(df[col], errors="coerce").astype(float)


def _t(df: pd.DataFrame, col: str) -> pd.Series:
    if col not in df:
        return pd.Series("", index=df.index, dtype=object)
    return df[col].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))


def num(v, digits: int = 5):
    """A JSON number with ``digits`` significant digits, or None for NaN, inf and non-numbers."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(f):
        return None
    return float(f"{f:.{digits}g}")


def nums(s, digits: int = 5) -> list:
    return [num(v, digits) for v in s]


def codes(s) -> dict:
    """A text column as its distinct values and one index a row: a kernel name or a bottleneck
    sentence repeated over 10,000 rows is written once."""
    values, index = [], {}
    out = []
    for v in s:
        v = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
        if v not in index:
            index[v] = len(values)
            values.append(v)
        out.append(index[v])
    return {"values": values, "codes": out}


def _level_bytes(df: pd.DataFrame, level: str) -> pd.Series | None:
    """A level's bytes per launch, or None when no row has them."""
    _, (rd, wr), total, _ = LEVELS[level]
    if rd in df or wr in df:
        b = _n(df, rd).fillna(0.0) + _n(df, wr).fillna(0.0)
        b = b.where(_n(df, rd).notna() | _n(df, wr).notna())
    elif total and total in df:
        b = _n(df, total)
    else:
        return None
    return b if (b > 0).any() else None


def _judged_at(df: pd.DataFrame, level: str, nbytes: pd.Series) -> pd.DataFrame:
    """Each row judged by the core against its own roofs with ``nbytes`` as its traffic and the
    level's bandwidth as its memory roof: the intensity, % of the binding roof, the roof's name
    and the bound, as the hierarchical roofline reads a row at that level."""
    c = df.copy()
    half = nbytes / 2.0  # the judgement reads the sum of reads and writes only
    c["bytes_read"], c["bytes_written"] = half, half
    t = _n(df, "time_median_us")
    c["bandwidth_gbs"] = nbytes / (t * 1e3)
    roof_col = LEVELS[level][3]
    c["peak_bandwidth_gbs"] = _n(df, roof_col)
    if level == "l2":
        c["theoretical_bandwidth_gbs"] = np.nan  # no datasheet figure for L2
    c = c.drop(columns=[x for x in ("size_fixed_cost_us", "size_bandwidth_gbs") if x in c])
    j = rl.classify(c)
    fl = _n(df, "flops")
    inten = (fl / nbytes).where((nbytes > 0) & (fl > 0))
    # a row without FLOPs: its bandwidth at this level against the level's roof
    j["bandwidth_pct_peak"] = 100.0 * c["bandwidth_gbs"] / c["peak_bandwidth_gbs"].where(c["peak_bandwidth_gbs"] > 0)
    return _binding(j, inten, f"{rl.LEVEL_NAMES.get(level, 'DRAM')} bandwidth")


def _binding(j: pd.DataFrame, inten: pd.Series, memory_name: str | None) -> pd.DataFrame:
    """The roof that binds each row at intensity ``inten`` (memory below its ridge, compute at or
    above it) and the row's % of it: of the roofline's attainable figure for a row with FLOPs, of
    the memory roof for one without."""
    ridge = _n(j, "ridge_flop_per_byte")
    dts = _t(j, "dtype")
    mem = pd.Series([memory_name or f"{d} memory".strip() for d in dts], index=j.index)
    compute = _t(j, "ceiling_name").where(_t(j, "ceiling_name") != "", dts + " compute")
    has_fl = inten > 0
    name = mem.where(~has_fl | (inten < ridge) | ridge.isna(), compute)
    pct = _n(j, "roofline_efficiency_pct").where(has_fl, _n(j, "bandwidth_pct_peak"))
    return pd.DataFrame({"x": inten, "pct": pct, "roof": name, "bound": _t(j, "bound")}, index=j.index)


def rows_payload(df: pd.DataFrame) -> dict:
    """Every row of a results table as columns for the page: what the hover, the filters and both
    charts need. ``x``/``pct``/``roof``/``bound`` hold one entry per memory level there is."""
    nbytes = _n(df, "bytes_read").fillna(0.0) + _n(df, "bytes_written").fillna(0.0)
    fam = _t(df, "family").where(_t(df, "family") != "", _t(df, "kernel"))
    # the row's own intensity (the core's flops / declared bytes; recomputed the same way for a
    # table that lacks the column)
    inten = _n(df, "intensity_flop_per_byte") if "intensity_flop_per_byte" in df else _n(df, "flops") / nbytes
    own = _binding(df.assign(ridge_flop_per_byte=rl.ridge_point(_n(df, "peak_bandwidth_gbs"), _n(df, "peak_gflops")),
                             ceiling_name=_own_compute_names(df)),
                   inten.where((_n(df, "flops") > 0) & (nbytes > 0)), None)
    levels = {"declared": own}
    for level in ("dram", "l2"):
        b = _level_bytes(df, level)
        if b is not None and (_n(df, LEVELS[level][3]) > 0).any():
            levels[level] = _judged_at(df, level, b)
    label = _t(df, "label")
    return {
        "n": int(len(df)),
        "kernel": codes(_t(df, "kernel")), "variant": codes(_t(df, "variant")), "family": codes(fam),
        "dtype": codes(_t(df, "dtype")), "shape": codes(_t(df, "shape")), "label": codes(label),
        "op": codes(_t(df, "op")) if "op" in df else None,
        "time_us": nums(_n(df, "time_median_us")), "gbs": nums(_n(df, "bandwidth_gbs")),
        "gflops": nums(_n(df, "gflops")), "bytes": nums(nbytes.where(nbytes > 0)),
        "verified": [bool(v) for v in (rl._as_bool(df["verified"]) if "verified" in df else [True] * len(df))],
        "above_peak": [bool(v) for v in (rl._as_bool(df["above_peak"]) if "above_peak" in df else [False] * len(df))],
        "timing": codes(_t(df, "timing")), "bottleneck": codes(_t(df, "bottleneck")),
        "levels": {k: {"label": LEVELS[k][0], "x": nums(v["x"]), "pct": nums(v["pct"], 4),
                       "roof": codes(v["roof"]), "bound": codes(v["bound"])} for k, v in levels.items()},
    }


def _own_compute_names(df: pd.DataFrame) -> pd.Series:
    """The compute roof each row was judged against, named as the static chart names it."""
    src = _t(df, "peak_compute_source")
    dts = _t(df, "dtype")
    return pd.Series([f"{d} {'matrix' if 'matrix' in s or 'mma_peak' in s else 'vector'}" for d, s in zip(dts, src)],
                     index=df.index)


def roofline_payload(df: pd.DataFrame, ceilings: pd.DataFrame | None = None) -> dict:
    """The roofs (measured solid, theoretical dashed, per dtype: memory, vector, matrix), the
    cache levels' roofs and the ridge points, as the static roofline draws them; the line samples
    are computed here (``roofline.attainable``) so the page draws what the PNG draws."""
    rows, sweep = rl.split_sweep(df)
    ceil = rl.ceilings(rows) if ceilings is None else ceilings
    out = {"roofs": [], "levels": [], "ridges": [], "sweep": [], "ceilings": []}
    if not isinstance(ceil, pd.DataFrame) or not len(ceil):
        return out
    seen = set()
    for r in ceil.to_dict("records"):
        # A cache level's roof is the device's, whatever the dtype: listed once.
        level = r["kind"] in rl.LEVEL_NAMES
        key = (r["kind"], r["value"], r["source"]) if level else (r["dtype"], r["kind"], r["source"], r["value"])
        if key in seen:
            continue
        seen.add(key)
        out["ceilings"].append({"name": r["name"], "dtype": "" if level else r["dtype"], "kind": r["kind"],
                                "value": num(r["value"]), "unit": r["unit"], "source": r["source"],
                                "detail": r["detail"]})
    inten = _n(rows, "intensity_flop_per_byte")
    gfl = _n(rows, "gflops")
    on = (inten > 0) & (gfl > 0)
    dtypes = list(dict.fromkeys(list(ceil["dtype"]) + list(_t(rows[on], "dtype"))))
    roofs = _roofs(ceil, dtypes)
    xs = list(inten[on]) + [rl.ridge_point(r[3], r[4]) for r in roofs if r[2] != "memory"]
    xs = [x for x in xs if math.isfinite(x) and x > 0]
    lo, hi = (min(xs) / 30, max(xs) * 30) if xs else (1e-3, 1e3)
    lo, hi = min(lo, 1e-2), max(hi, 1e2)
    grid = np.geomspace(lo, hi, 160)
    for dt, src, kind, bw, fl in roofs:
        y = grid * bw if kind == "memory" else rl.attainable(grid, bw, fl)
        out["roofs"].append({"dtype": dt, "source": src, "kind": kind, "bandwidth_gbs": num(bw), "gflops": num(fl),
                             "color": _color(dt), "x": nums(grid), "y": nums(y)})
        if kind != "memory":
            out["ridges"].append({"dtype": dt, "source": src, "kind": kind, "x": num(rl.ridge_point(bw, fl)),
                                  "y": num(fl), "color": _color(dt)})
    top = max([r[4] for r in roofs if r[2] != "memory"] or [float(np.nanmax(grid * max(r[3] for r in roofs)))]
              if roofs else [1.0])
    for kind, name, bw in _levels(ceil):
        y = np.minimum(grid * bw, top)
        out["levels"].append({"kind": kind, "name": name, "bandwidth_gbs": num(bw), "x": nums(grid), "y": nums(y)})
    if len(sweep):
        for dt, g in sweep.groupby(_t(sweep, "dtype"), sort=False):
            x, y = _n(g, "intensity_flop_per_byte"), _n(g, "gflops")
            ok = (x > 0) & (y > 0)
            order = np.argsort(x[ok].to_numpy())
            out["sweep"].append({"dtype": dt, "color": _color(dt) if dt else "#333333",
                                 "x": nums(x[ok].to_numpy()[order]), "y": nums(y[ok].to_numpy()[order])})
    return out


def size_payload(df: pd.DataFrame, curve: dict | None) -> dict:
    """The size-aware ceiling: one fitted line t(B) = t0 + B / BW per access pattern (the size
    chart's own choice of lines: the saved curve, else the fit the rows carry) sampled over the
    bytes of the run, and the curve's measured points."""
    rows = rl.split_sweep(df)[0]
    lines = _lines_of(curve, rows)
    nbytes = (_n(rows, "bytes_read").fillna(0) + _n(rows, "bytes_written").fillna(0))
    xs = [b for b in nbytes if b > 0]
    pts = (curve or {}).get("points") or []
    xs += [float(p["bytes"]) for p in pts if isinstance(p, dict) and num(p.get("bytes"))]
    lo = min([4096.0] + xs) / 2
    hi = max([4e8] + xs) * 2
    grid = np.geomspace(lo, hi, 120)
    out_lines = []
    for ln in lines:
        t0, bw = ln["t0_us"], ln["bandwidth_gbs"]
        out_lines.append({"pattern": ln["pattern"], "t0_us": num(t0), "bandwidth_gbs": num(bw),
                          "residual_pct": num(ln["residual_pct"], 3), "max_error_pct": num(ln["max_error_pct"], 3),
                          "x": nums(grid), "y": nums(grid / (t0 + grid / (bw * 1e3)) / 1e3)})
    measured = []
    for p in pts:
        if not isinstance(p, dict):
            continue
        b, t = num(p.get("bytes")), num(p.get("time_us"))
        if b and t:
            measured.append({"kernel": str(p.get("kernel", "")), "bytes": b, "gbs": num(b / t / 1e3)})
    return {"lines": out_lines, "points": measured}


# Above this many configurations a bar each is unreadable (and slow to draw): the chart then has a
# bar per operation (the table's means) instead.
MAX_DTYPE_BARS = 80


def dtype_payload(df: pd.DataFrame) -> dict | None:
    """FP32 against FP16 against BF16 (whichever the run has): a bar per configuration and dtype
    (the comparison chart's pairs; a bar per operation's mean past MAX_DTYPE_BARS configurations)
    and the comparison table of averages and speed-ups; None for a run of one dtype."""
    rows = rl.split_sweep(df)[0]
    try:
        dtypes, base = _cmp._dtypes_in(rows, None, None, "dtype comparison")
        table = _cmp.comparison_table(rows, dtypes=dtypes, baseline=base)
    except (NoData, KeyError, ValueError):
        return None
    per_op = table[table["operation"] != "all"]
    n_configs = int(per_op["configs"].sum()) if len(per_op) else 0
    if not n_configs:
        return None
    out = {"dtypes": dtypes, "baseline": base, "colors": {d: _color(d) for d in dtypes}, "table": table_payload(table)}
    if n_configs > MAX_DTYPE_BARS:
        out.update(configs=[str(o) for o in per_op["operation"]], per="operation",
                   gbs={d: nums(per_op[f"{d}_bandwidth_gbs"]) for d in dtypes}, time_us=None,
                   note=f"{n_configs} configurations: one bar per operation (the mean of its configurations)")
        return out
    pairs = _cmp._pairs(rows, "bandwidth_gbs", dtypes, base)
    names = []
    for fam, g in pairs.groupby("family", sort=False):
        names += [(i, f"{fam}: {n}") for i, n in zip(g.index, _cmp._config_names(g))]
    order = [i for i, _ in names]
    label = dict(names)
    out.update(configs=[label[i] for i in order], per="configuration",
               gbs={d: nums(pairs.loc[order, f"{d}_value"]) for d in dtypes},
               time_us={d: nums(pairs.loc[order, f"{d}_time_us"]) for d in dtypes}, note="")
    return out


def breakdown_payload(groups, times_us, what: str, unit_note: str = "") -> dict | None:
    """A time breakdown: one bar per group (largest first) with its share of the total."""
    s = pd.Series(list(times_us), index=list(groups), dtype=float).groupby(level=0, sort=False).sum()
    s = s[s > 0].sort_values(ascending=False)
    if not len(s):
        return None
    total = float(s.sum())
    return {"what": what, "note": unit_note, "groups": [str(g) for g in s.index], "time_us": nums(s),
            "pct": nums(100.0 * s / total, 4), "colors": [_CATEGORY_COLORS[i % len(_CATEGORY_COLORS)]
                                                          for i in range(len(s))]}


def table_payload(df: pd.DataFrame, title: str = "", columns=None, note: str = "") -> dict:
    """A table for the page (sortable there), column by column: numbers as numbers, text as
    :func:`codes` (a sentence repeated down 10,000 rows is written once)."""
    if columns is not None:
        df = df[[c for c in columns if c in df.columns]]
    cols, kinds, data = [], [], []
    for c in df.columns:
        s = df[c]
        number = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        cols.append(str(c))
        kinds.append("number" if number else "text")
        data.append(nums(s, 6) if number else codes(s))
    return {"title": title, "note": note, "columns": cols, "kinds": kinds, "data": data, "n": int(len(df))}


def busy_payload(parts: list[tuple[str, float]], total_us: float, note: str = "") -> dict | None:
    """The busy/idle bar: named parts of a step's wall time (busy first), each with its share."""
    parts = [(str(n), float(v)) for n, v in parts if v is not None and v == v and float(v) > 0]
    if not parts or not (total_us and total_us == total_us and total_us > 0):
        return None
    return {"total_us": num(total_us), "note": note,
            "parts": [{"name": n, "time_us": num(v), "pct": num(100.0 * v / total_us, 4)} for n, v in parts]}

