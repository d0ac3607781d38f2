"""Where GPU time goes: breakdowns, Amdahl's law, DRAM counters beside logical bytes, findings.

Every function takes a kernel-trace DataFrame (see readers.SCHEMA) and returns a DataFrame.
"GPU time" is the sum of kernel durations, not wall-clock time: kernels that overlap on
different streams each count in full, as in rocprofv3 --stats and nsys summaries.
"""

import math
import numbers
from collections.abc import Iterable

import numpy as np
import pandas as pd

from .categories import categorize
from .table import check_frame

_BY = {"category": "category", "kernel": "kernel_name", "short_name": "short_name"}


def _with_category(df, rules=None, extra_rules=None):
    if "category" in df.columns and rules is None and extra_rules is None:
        return df
    return categorize(df, rules=rules, extra_rules=extra_rules)


def _group_key(by):
    if not isinstance(by, str):
        raise TypeError(f"by: expected one of {', '.join(_BY)}, got {type(by).__name__} {by!r:.60}")
    if by not in _BY:
        raise ValueError(f"by must be one of {', '.join(_BY)}, not {by!r}")
    return _BY[by]


def breakdown(df, by="category", rules=None, extra_rules=None, per=None, drop_invalid=False):
    """Total time, calls, average and % of GPU time per category (or kernel), largest first.

    Columns: <by>, total_time_ns, calls, avg_time_ns, pct_gpu_time (and short_name, category
    when by="kernel"). ``per="device"``, ``"pid"`` or a list of such columns gives one
    breakdown per GPU and/or process instead (see breakdown_per()). Rows with a negative,
    empty or infinite duration are a ValueError naming them, or left out (with a warning)
    under ``drop_invalid=True``.
    """
    if per is not None:
        return breakdown_per(df, per, by=by, rules=rules, extra_rules=extra_rules,
                             drop_invalid=drop_invalid)
    key = _group_key(by)
    df = check_frame(df, drop_invalid, what="df")
    data = _with_category(df, rules, extra_rules)
    work = pd.DataFrame({
        key: data[key].astype(object),
        "total_time_ns": pd.to_numeric(data["duration_ns"], errors="coerce").fillna(0.0).astype(float),
        "calls": pd.to_numeric(data["calls"], errors="coerce").fillna(1).astype("int64"),
    })
    if by == "kernel":
        work["short_name"] = data["short_name"].astype(object)
        work["category"] = data["category"].astype(object)
    agg = {"total_time_ns": "sum", "calls": "sum"}
    if by == "kernel":
        agg.update(short_name="first", category="first")
    out = work.groupby(key, sort=False, dropna=False).agg(agg).reset_index()
    out["avg_time_ns"] = out["total_time_ns"] / out["calls"].where(out["calls"] > 0)
    total = out["total_time_ns"].sum()
    out["pct_gpu_time"] = 100.0 * out["total_time_ns"] / total if total > 0 else 0.0
    out = out.sort_values(["total_time_ns", key], ascending=[False, True], kind="stable")
    cols = [key] + (["short_name", "category"] if by == "kernel" else []) + \
        ["total_time_ns", "calls", "avg_time_ns", "pct_gpu_time"]
    return out[cols].reset_index(drop=True)


def breakdown_per(df, per, by="category", rules=None, extra_rules=None, drop_invalid=False):
    """breakdown() within each group of ``per`` (a column name or a list: "device", "pid").

    Columns: the ``per`` columns, <by> (plus short_name, category for kernels),
    total_time_ns, calls, avg_time_ns, pct_gpu_time (share of its group's GPU time) and
    pct_of_total (share of all GPU time). Groups in order of their keys; largest first
    within a group. Rows whose group is unknown (NA) form a group of their own. Invalid
    durations as in breakdown().
    """
    key = _group_key(by)
    check_frame(df, drop_invalid, what="df")
    if isinstance(per, str):
        per_cols = [per]
    elif isinstance(per, (list, tuple)) and all(isinstance(c, str) for c in per):
        per_cols = list(per)
    else:
        raise TypeError(f"per: expected a column name or a list of names (e.g. 'device' or ('pid', "
                        f"'device')), got {type(per).__name__} {per!r:.60}")
    if not per_cols:
        raise ValueError("per needs at least one column, e.g. per='device' or per=('pid', 'device')")
    missing = [c for c in per_cols if c not in df.columns]
    if missing:
        raise ValueError(f"per: the trace has no column {', '.join(map(repr, missing))} "
                         f"(columns: device, pid, stream, ...)")
    df = check_frame(df, drop_invalid)
    data = _with_category(df, rules, extra_rules)
    work = pd.DataFrame({c: data[c].astype(object).where(data[c].notna(), None) for c in per_cols})
    work[key] = data[key].astype(object)
    work["total_time_ns"] = pd.to_numeric(data["duration_ns"], errors="coerce").fillna(0.0).astype(float)
    work["calls"] = pd.to_numeric(data["calls"], errors="coerce").fillna(1).astype("int64")
    agg = {"total_time_ns": "sum", "calls": "sum"}
    if by == "kernel":
        work["short_name"] = data["short_name"].astype(object)
        work["category"] = data["category"].astype(object)
        agg.update(short_name="first", category="first")
    out = work.groupby(per_cols + [key], sort=False, dropna=False).agg(agg).reset_index()
    for c in per_cols:                      # a pid stays an integer next to an unknown one
        if pd.api.types.is_integer_dtype(data[c].dtype):
            out[c] = out[c].astype("Int64")
    out["avg_time_ns"] = out["total_time_ns"] / out["calls"].where(out["calls"] > 0)
    group_total = out.groupby(per_cols, sort=False, dropna=False)["total_time_ns"].transform("sum")
    out["pct_gpu_time"] = (100.0 * out["total_time_ns"] / group_total.where(group_total > 0)).fillna(0.0)
    total = out["total_time_ns"].sum()
    out["pct_of_total"] = 100.0 * out["total_time_ns"] / total if total > 0 else 0.0
    sort_keys = [out[c].map(_group_order) for c in per_cols]
    order = pd.DataFrame({f"_k{i}": k for i, k in enumerate(sort_keys)})
    order["_t"] = -out["total_time_ns"]
    order["_n"] = out[key].astype(str)
    out = out.loc[order.sort_values(list(order.columns), kind="stable").index]
    cols = per_cols + [key] + (["short_name", "category"] if by == "kernel" else []) + \
        ["total_time_ns", "calls", "avg_time_ns", "pct_gpu_time", "pct_of_total"]
    return out[cols].reset_index(drop=True)


def _group_order(value):
    """Sort key of a group label: numbers in numeric order, then text, unknown (NA) last."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return (1, 0, 0, "")
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, 0, float(value), "")
    return (0, 1, 0, str(value))


def amdahl(df, by="category", factors=(2.0, 10.0), rules=None, extra_rules=None, drop_invalid=False):
    """Overall speed-up of the GPU time if one category (or kernel) were k times faster or free.

    With p its fraction of GPU time: speed-up = 1 / ((1 - p) + p / k), and 1 / (1 - p) when it
    takes no time. Columns: <by>, total_time_ns, fraction, speedup_if_<k>x..., speedup_if_free.
    """
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Iterable):
        raise TypeError(f"factors: expected a list of speed-up factors (e.g. (2, 10)), got "
                        f"{type(factors).__name__} {factors!r:.60}")
    factors = list(factors)
    for k in factors:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real):
            raise TypeError(f"factors: each speed-up factor is a number, got {type(k).__name__} {k!r:.60}")
        if not (math.isfinite(float(k)) and float(k) > 0):
            raise ValueError(f"factors: each speed-up factor must be a positive finite number, not {k!r}")
    table = breakdown(df, by=by, rules=rules, extra_rules=extra_rules, drop_invalid=drop_invalid)
    key = _group_key(by)
    total = table["total_time_ns"].sum()
    out = table[[key, "total_time_ns"]].copy()
    p = out["total_time_ns"] / total if total > 0 else out["total_time_ns"] * 0.0
    out["fraction"] = p
    for k in factors:
        k = float(k)
        if k <= 0:
            raise ValueError(f"speed-up factor must be positive, not {k}")
        label = f"speedup_if_{k:g}x"
        out[label] = 1.0 / ((1.0 - p) + p / k)
    with np.errstate(divide="ignore"):
        out["speedup_if_free"] = np.where(p < 1.0, 1.0 / (1.0 - p.clip(upper=1.0)), math.inf)
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# DRAM counters beside bwprof's logical bytes
# --------------------------------------------------------------------------------------------

# (column, factor to bytes) candidates per direction, first present wins. rocprof's
# FETCH_SIZE/WRITE_SIZE are kilobytes (1024 bytes); ncu readers already give bytes.
_DRAM_READ = (("dram__bytes_read.sum", 1.0), ("dram_bytes_read", 1.0), ("FETCH_SIZE", 1024.0))
_DRAM_WRITE = (("dram__bytes_write.sum", 1.0), ("dram_bytes_written", 1.0), ("WRITE_SIZE", 1024.0))


def _frame_arg(df, name):
    """A trace given as anything but a DataFrame is a TypeError naming the argument."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name}: expected a kernel-trace DataFrame (from bwprof.traces.read), got "
                        f"{type(df).__name__} {df!r:.60}")
    return df


def dram_bytes(df):
    """A copy of ``df`` with ``dram_bytes_read``/``dram_bytes_written`` in bytes from the counters
    present (ncu dram__bytes_read.sum / dram__bytes_write.sum, rocprof FETCH_SIZE / WRITE_SIZE).
    """
    _frame_arg(df, "df")
    out = df.copy()
    for target, candidates in (("dram_bytes_read", _DRAM_READ), ("dram_bytes_written", _DRAM_WRITE)):
        for column, factor in candidates:
            if column in out.columns:
                out[target] = pd.to_numeric(out[column], errors="coerce").astype(float) * factor
                break
        else:
            out[target] = np.nan
    return out


def join_counters(trace, results, mapping=None, on="kernel_name"):
    """Join per-kernel DRAM counters from a trace with bwprof's measurement of the same kernel.

    ``results`` is bwprof's results DataFrame (kernel, variant, dtype, ..., bytes_read,
    bytes_written, time_median_us). Matching: with ``mapping`` ({trace kernel short or full
    name: results ``kernel`` value}) via that; otherwise results' ``on`` column (default
    ``kernel_name``, the GPU symbol) must equal the trace's short or full kernel name. A trace
    kernel matching several result rows (dtypes, shapes) gives one row per pair.

    Per trace kernel the counters are averaged per dispatch; ``dram_read_ratio`` =
    dram_bytes_read / bytes_read (below 1: served from cache; above 1: data read more than
    once), likewise ``dram_write_ratio`` and ``dram_ratio`` for both directions.
    """
    _frame_arg(trace, "trace")
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results: expected bwprof's results DataFrame (kernel, bytes_read, bytes_written, "
                        f"time_median_us, ...), got {type(results).__name__} {results!r:.60}")
    if mapping is not None and not isinstance(mapping, dict):
        raise TypeError(f"mapping: expected a {{trace kernel name: results kernel}} dict or None, got "
                        f"{type(mapping).__name__} {mapping!r:.60}")
    if not isinstance(on, str):
        raise TypeError(f"on: expected a column name of results, got {type(on).__name__} {on!r:.60}")
    t = dram_bytes(trace)
    t = t.assign(_calls=pd.to_numeric(t["calls"], errors="coerce").fillna(1).astype(float))
    grouped = t.groupby("short_name", sort=False).agg(
        kernel_name=("kernel_name", "first"),
        dispatches=("_calls", "sum"),
        trace_time_ns=("duration_ns", "sum"),
        dram_bytes_read=("dram_bytes_read", "mean"),
        dram_bytes_written=("dram_bytes_written", "mean"),
    ).reset_index()
    grouped["trace_avg_time_ns"] = grouped["trace_time_ns"] / grouped["dispatches"]
    grouped = grouped.drop(columns="trace_time_ns")
    res = results.copy()
    if mapping:
        # Both spellings of each trace kernel may be used as mapping keys.
        lookup = {str(k): str(v) for k, v in mapping.items()}
        grouped["_key"] = [lookup.get(s, lookup.get(k)) for s, k in
                           zip(grouped["short_name"], grouped["kernel_name"])]
        res["_key"] = res["kernel"].astype(str)
    else:
        if on not in res.columns:
            raise ValueError(f"results have no {on!r} column; pass mapping={{trace kernel: results kernel}}")
        symbols = set(res[on].astype(str))
        grouped["_key"] = [s if s in symbols else (k if k in symbols else None)
                           for s, k in zip(grouped["short_name"], grouped["kernel_name"])]
        res["_key"] = res[on].astype(str)
    res = res.drop(columns=[c for c in ("kernel_name", "short_name") if c in res.columns])
    out = grouped.dropna(subset=["_key"]).merge(res, on="_key", how="inner").drop(columns="_key")
    for direction in ("read", "written"):
        logical = pd.to_numeric(out.get(f"bytes_{direction}"), errors="coerce")
        ratio = out[f"dram_bytes_{direction}"] / logical.where(logical > 0)
        out["dram_read_ratio" if direction == "read" else "dram_write_ratio"] = ratio
    logical_total = pd.to_numeric(out.get("bytes_read"), errors="coerce") + \
        pd.to_numeric(out.get("bytes_written"), errors="coerce")
    out["dram_ratio"] = (out["dram_bytes_read"] + out["dram_bytes_written"]) / \
        logical_total.where(logical_total > 0)
    out["dram_bandwidth_gbs"] = (out["dram_bytes_read"] + out["dram_bytes_written"]) / \
        out["trace_avg_time_ns"]            # bytes per ns == GB/s
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Findings
# --------------------------------------------------------------------------------------------

# Heuristic thresholds behind each finding; pass your own to findings(thresholds=...).
DEFAULT_THRESHOLDS = {
    "lds_wait_fraction": 0.10,       # SQ_WAIT_INST_LDS / SQ_WAVE_CYCLES
    "lds_wait_per_lds_inst": 8.0,    # SQ_WAIT_INST_LDS / SQ_INSTS_LDS when no SQ_WAVE_CYCLES
    "l2_miss_rate": 0.50,            # TCC_MISS / (TCC_HIT + TCC_MISS)
    "l2_hit_rate_pct": 50.0,         # ncu lts__t_sector_hit_rate.pct below this
    "waves_per_cu": 4.0,             # SQ_WAVES / cu_count below this (one wave per SIMD)
    "min_waves": 256.0,              # SQ_WAVES below this when cu_count is unknown
    "ncu_waves_per_sm": 1.0,         # launch__waves_per_multiprocessor below this
    "achieved_occupancy_pct": 25.0,  # ncu sm__warps_active...pct below this
    "vmem_fraction": 0.30,           # SQ_INSTS_VMEM / (VALU + SALU + VMEM + LDS + SMEM)
    "dram_throughput_pct": 60.0,     # ncu DRAM throughput % of peak above this
    "dram_ratio_high": 1.5,          # DRAM bytes / logical bytes above this
    "dram_ratio_low": 0.5,           # ... below this
}


def _col(df, *names):
    for n in names:
        if n in df.columns:
            return pd.to_numeric(df[n], errors="coerce").astype(float)
    return None


def findings(df, cu_count=None, thresholds=None):
    """Plain-language findings per kernel from hardware counters, one row per finding.

    Indicators (rocprof counters, ncu metrics): LDS wait high -> bank conflicts; L2 misses
    high -> poor locality; few waves -> occupancy-limited; memory instructions dominating ->
    memory-bound; DRAM/logical byte ratios when join_counters() output is given; ncu rule rows
    of a details page. Columns: kernel, indicator, value, threshold, finding.
    """
    _frame_arg(df, "df")
    if cu_count is not None:
        if isinstance(cu_count, (bool, np.bool_)) or not isinstance(cu_count, numbers.Integral):
            raise TypeError(f"cu_count: expected the device's compute-unit count (an integer) or None, got "
                            f"{type(cu_count).__name__} {cu_count!r:.60}")
        if cu_count < 1:
            raise ValueError(f"cu_count: a device has at least one compute unit, not {cu_count}")
    if thresholds is not None and not isinstance(thresholds, dict):
        raise TypeError(f"thresholds: expected a dict of {{indicator: threshold}} or None, got "
                        f"{type(thresholds).__name__} {thresholds!r:.60}")
    th = dict(DEFAULT_THRESHOLDS)
    th.update(thresholds or {})
    if "short_name" not in df.columns:
        raise ValueError("findings() needs a kernel-trace DataFrame (short_name column missing)")
    # Average per kernel: counters are per dispatch, the advice is per kernel.
    numeric = df.select_dtypes(include=["number"]).columns.difference(
        ["start_ns", "end_ns", "correlation_id", "dispatch_id"])
    per_kernel = df[["short_name"]].join(df[numeric].apply(pd.to_numeric, errors="coerce")) \
        .groupby("short_name", sort=False).mean()
    rows = []

    def add(kernel, indicator, value, limit, text):
        rows.append({"kernel": kernel, "indicator": indicator, "value": float(value),
                     "threshold": float(limit), "finding": text})

    wait, cycles, lds = (_col(per_kernel, c) for c in ("SQ_WAIT_INST_LDS", "SQ_WAVE_CYCLES", "SQ_INSTS_LDS"))
    hit, miss = _col(per_kernel, "TCC_HIT", "TCC_HIT_sum"), _col(per_kernel, "TCC_MISS", "TCC_MISS_sum")
    waves = _col(per_kernel, "SQ_WAVES")
    insts = {c: _col(per_kernel, f"SQ_INSTS_{c}") for c in ("VALU", "SALU", "VMEM", "LDS", "SMEM")}
    l2_hit_pct = _col(per_kernel, "lts__t_sector_hit_rate.pct", "L2 Hit Rate")
    ncu_waves = _col(per_kernel, "launch__waves_per_multiprocessor", "Waves Per SM")
    occupancy = _col(per_kernel, "sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy")
    dram_pct = _col(per_kernel, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM Throughput")
    ratio = _col(per_kernel, "dram_ratio")

    for kernel in per_kernel.index:
        def v(series):
            return None if series is None or pd.isna(series[kernel]) else float(series[kernel])

        if v(wait) is not None and v(cycles):
            frac = v(wait) / v(cycles)
            if frac > th["lds_wait_fraction"]:
                add(kernel, "SQ_WAIT_INST_LDS / SQ_WAVE_CYCLES", frac, th["lds_wait_fraction"],
                    f"Waves spend {frac:.0%} of their cycles waiting on LDS: likely LDS bank "
                    "conflicts; pad shared arrays or change the access stride.")
        elif v(wait) is not None and v(lds):
            per = v(wait) / v(lds)
            if per > th["lds_wait_per_lds_inst"]:
                add(kernel, "SQ_WAIT_INST_LDS / SQ_INSTS_LDS", per, th["lds_wait_per_lds_inst"],
                    f"Each LDS instruction waits {per:.1f} cycles on average: likely LDS bank "
                    "conflicts; pad shared arrays or change the access stride.")
        if v(hit) is not None and v(miss) is not None and v(hit) + v(miss) > 0:
            rate = v(miss) / (v(hit) + v(miss))
            if rate > th["l2_miss_rate"]:
                add(kernel, "TCC_MISS / (TCC_HIT + TCC_MISS)", rate, th["l2_miss_rate"],
                    f"{rate:.0%} of L2 accesses miss: poor locality; check tile sizes and the "
                    "order in which blocks walk memory.")
        if v(l2_hit_pct) is not None and v(l2_hit_pct) < th["l2_hit_rate_pct"]:
            add(kernel, "L2 hit rate %", v(l2_hit_pct), th["l2_hit_rate_pct"],
                f"Only {v(l2_hit_pct):.0f}% of L2 sectors hit: poor locality; check tile sizes "
                "and the order in which blocks walk memory.")
        if v(waves) is not None:
            limit = th["waves_per_cu"] * cu_count if cu_count else th["min_waves"]
            if v(waves) < limit:
                where = f"{v(waves) / cu_count:.1f} per CU" if cu_count else f"{v(waves):.0f} in all"
                add(kernel, "SQ_WAVES", v(waves), limit,
                    f"Few waves ({where}): the GPU is not filled, occupancy-limited; launch more "
                    "work-groups or use fewer registers/LDS per work-group.")
        if v(ncu_waves) is not None and v(ncu_waves) < th["ncu_waves_per_sm"]:
            add(kernel, "waves per SM", v(ncu_waves), th["ncu_waves_per_sm"],
                f"Less than one full wave of blocks ({v(ncu_waves):.2f} per SM): some SMs idle; "
                "the launch is too small to fill the GPU.")
        if v(occupancy) is not None and v(occupancy) < th["achieved_occupancy_pct"]:
            add(kernel, "achieved occupancy %", v(occupancy), th["achieved_occupancy_pct"],
                f"Achieved occupancy is {v(occupancy):.0f}%: occupancy-limited; registers, shared "
                "memory or block size cap the warps per SM.")
        present = {k: v(s) for k, s in insts.items() if v(s) is not None}
        if "VMEM" in present and len(present) >= 2 and sum(present.values()) > 0:
            frac = present["VMEM"] / sum(present.values())
            if frac > th["vmem_fraction"]:
                add(kernel, "SQ_INSTS_VMEM share", frac, th["vmem_fraction"],
                    f"Memory instructions are {frac:.0%} of the instruction mix: memory-bound; "
                    "reuse data from registers or LDS and move fewer bytes.")
        if v(dram_pct) is not None and v(dram_pct) > th["dram_throughput_pct"]:
            add(kernel, "DRAM throughput %", v(dram_pct), th["dram_throughput_pct"],
                f"DRAM runs at {v(dram_pct):.0f}% of peak: memory-bound; only fewer bytes "
                "(fusion, smaller types) make it faster.")
        if v(ratio) is not None:
            if v(ratio) > th["dram_ratio_high"]:
                add(kernel, "DRAM bytes / logical bytes", v(ratio), th["dram_ratio_high"],
                    f"DRAM traffic is {v(ratio):.1f}x the bytes the kernel must move: data is "
                    "re-read from memory; improve reuse in cache.")
            elif v(ratio) < th["dram_ratio_low"]:
                add(kernel, "DRAM bytes / logical bytes", v(ratio), th["dram_ratio_low"],
                    f"DRAM traffic is {v(ratio):.2f}x the logical bytes: much of the data came "
                    "from cache, so GB/s computed from logical bytes overstates DRAM bandwidth.")
    rules = df.attrs.get("rules") or []
    if rules:
        from .names import short_kernel_name
        for r in rules:
            if str(r["type"]).upper() in ("OPT", "WRN", "WARNING"):
                speedup = r["estimated_speedup"]
                add(short_kernel_name(r["kernel_name"]), f"ncu rule {r['rule']}",
                    speedup if pd.notna(speedup) else math.nan, math.nan,
                    " ".join(str(r["description"]).split()))
    return pd.DataFrame(rows, columns=["kernel", "indicator", "value", "threshold", "finding"])
