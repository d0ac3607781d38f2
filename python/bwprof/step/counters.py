"""Measured counters beside a step's logical bytes: DRAM bytes read and written per kernel, joined
to the same rows (as ``traces.join_counters`` does for bwprof's own kernels).

In process first: one more run under PyTorch's profiler with CUPTI metrics per kernel
(``_ExperimentalConfig(profiler_metrics=..., profiler_measure_per_kernel=True)``), apart from the
timed runs (counting replays each kernel). Where that gives nothing, ``python3 -m bwprof step
--counters dram`` runs the script again under ncu, the step once inside the NVTX range
``bwprof.counters``, and joins ncu's kernels to the step's launches in order (``join_ncu``).
A refusal or a missing profiler is said in the summary (``counters_error``); the rest of the
report stands.
"""
from __future__ import annotations

import json
import math
import os
import re
import tempfile

import pandas as pd

from ..traces.analysis import dram_bytes
from ..traces.names import short_kernel_name
from .rows import KEY

DRAM_METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"]
COUNTER_SETS = {"dram": DRAM_METRICS}
COUNTERS_RANGE = "bwprof.counters"   # the NVTX range around the one step ncu profiles
COUNTER_COLUMNS = ["dram_bytes_read", "dram_bytes_written", "dram_bandwidth_gbs", "dram_ratio", "counter_time_us",
                   "counters_source"]


def metric_list(counters) -> list[str]:
    """The metrics ``counters`` asks for: None (none), "dram", or metric names (a list or one
    comma-separated text)."""
    if counters is None or counters is False or counters == "none":
        return []
    if isinstance(counters, str):
        if counters in COUNTER_SETS:
            return list(COUNTER_SETS[counters])
        names = [c for c in re.split(r"[,\s]+", counters) if c]
    elif isinstance(counters, (list, tuple)):
        names = [str(c) for c in counters]
    else:
        raise ValueError(f"counters: expected 'dram', a list of metric names or None, got {type(counters).__name__}")
    bad = [c for c in names if not re.fullmatch(r"[A-Za-z_][\w.\[\]]*", c)]
    if not names or bad:
        raise ValueError(f"counters: {', '.join(bad) or repr(counters)} is not a counter set ('dram') nor a "
                         "metric name")
    return names


def experimental_config(torch, metrics: list[str]):
    """PyTorch's profiler config that reads ``metrics`` for each kernel (CUPTI range profiler)."""
    cfg = torch._C._profiler._ExperimentalConfig
    return cfg(profiler_metrics=list(metrics), profiler_measure_per_kernel=True)


def metric_events(prof, metrics: list[str]) -> pd.DataFrame:
    """The per-kernel metric values a profiled run recorded (its Chrome trace's events whose args
    hold the metrics), in time order: kernel_name and one column per metric."""
    fd, path = tempfile.mkstemp(suffix=".json", prefix="bwprof_counters_")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    finally:
        os.unlink(path)
    rows = []
    for ev in doc.get("traceEvents", []):
        args = ev.get("args") if isinstance(ev, dict) else None
        if isinstance(args, dict) and any(m in args for m in metrics):
            rows.append({"kernel_name": str(ev.get("name", "")), "ts": float(ev.get("ts", 0) or 0),
                         **{m: pd.to_numeric(args.get(m), errors="coerce") for m in metrics}})
    return pd.DataFrame(rows).sort_values("ts", kind="stable").reset_index(drop=True) if rows else pd.DataFrame()


def match_in_order(launches: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """``launches`` (kernels of one run, in launch order) with the measured rows joined to them:
    the i-th measured kernel to the next launch of the same (short) name."""
    kern = launches[launches["kind"] == "kernel"].sort_values("launch_ns", kind="stable")
    names = [short_kernel_name(n) for n in kern["kernel_name"]]
    got = [short_kernel_name(n) for n in measured["kernel_name"]]
    pairs, j = [], 0
    # Profilers demangle names their own way: the same count of launches pairs by place, when
    # nearly every short name agrees there; otherwise each measured kernel takes the next launch
    # of its short name.
    if len(names) == len(got) and names and sum(a == b for a, b in zip(names, got)) >= 0.9 * len(names):
        got = []
        pairs = [(kern.index[i], i) for i in range(len(names))]
    for i, n in enumerate(got):
        k = j
        while k < len(names) and names[k] != n:
            k += 1
        if k < len(names):
            pairs.append((kern.index[k], i))
            j = k + 1
    out = kern.loc[[p[0] for p in pairs]].copy()
    m = measured.iloc[[p[1] for p in pairs]].reset_index(drop=True)
    for c in m.columns:
        if c not in ("kernel_name", "ts", "short_name"):
            out[c] = m[c].values
    return out


def per_row(joined: pd.DataFrame, source: str) -> pd.DataFrame:
    """Counter values per kernel row (the rows' KEY), averaged per call."""
    d = dram_bytes(joined)
    if "gpu__time_duration.sum" in d:
        d["counter_time_us"] = pd.to_numeric(d["gpu__time_duration.sum"], errors="coerce") / 1e3
    elif "duration_ns" in d and "counter_time_us" not in d:
        d["counter_time_us"] = pd.to_numeric(d["duration_ns"], errors="coerce") / 1e3
    else:
        d["counter_time_us"] = math.nan
    g = d.groupby(KEY, sort=False, dropna=False).agg(
        dram_bytes_read=("dram_bytes_read", "mean"), dram_bytes_written=("dram_bytes_written", "mean"),
        counter_time_us=("counter_time_us", "median")).reset_index()
    g["counters_source"] = source
    return g


def join_rows(kernels: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """The report's rows with the counters beside the logical bytes: DRAM bytes per call, the GB/s
    they make over the row's time, and their ratio to the logical bytes (below 1: served from
    cache; above: read more than once)."""
    out = kernels.drop(columns=[c for c in COUNTER_COLUMNS if c in kernels.columns])
    out = out.merge(counts, on=KEY, how="left")
    dram = out["dram_bytes_read"] + out["dram_bytes_written"]
    logical = out["bytes_read"] + out["bytes_written"]
    out["dram_bandwidth_gbs"] = dram / (out["time_median_us"] * 1e3)
    out["dram_ratio"] = dram / logical.where(logical > 0)
    out["counters_source"] = out["counters_source"].fillna("")
    # A row whose op gave it no bytes takes the counted ones: its bytes are then the counters'.
    take = out["bytes_source"].eq("unknown") & out["dram_bytes_read"].notna()
    out.loc[take, "bytes_read"] = out.loc[take, "dram_bytes_read"]
    out.loc[take, "bytes_written"] = out.loc[take, "dram_bytes_written"]
    out.loc[take, "bytes_source"] = "counters"
    return out


def attach_counters(report, torch, call, metrics: list[str], records: list) -> None:
    """One more run with ``metrics`` read per kernel, joined to the report's rows; on failure the
    summary's ``counters_error`` says why."""
    from .attribute import launches as _launches
    from .run import profiled_runs

    report.summary["counters"] = ",".join(metrics)
    try:
        t, _, prof = profiled_runs(torch, call, 1, metrics)
        measured = metric_events(prof, metrics)
    except Exception as e:  # noqa: BLE001 - counters refused or unsupported: the report stands
        report.summary["counters_error"] = (f"in-process counters failed ({type(e).__name__}: "
                                            f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}); "
                                            "run `python3 -m bwprof step SCRIPT.py --counters dram` for ncu")
        return
    if not len(measured):
        report.summary["counters_error"] = ("PyTorch's profiler gave no per-kernel metric values (its CUPTI "
                                            "range profiler is off in this build or refused); run "
                                            "`python3 -m bwprof step SCRIPT.py --counters dram` for ncu")
        return
    from .attribute import traffic_of
    launch_rows = traffic_of(_launches(t, records), records)
    joined = match_in_order(launch_rows, measured)
    apply_counts(report, per_row(joined, "cupti"))


def apply_counts(report, counts: pd.DataFrame) -> None:
    """Join counter values to the report's rows and judge again the rows that took counted bytes."""
    from .judge import judge_rows, peaks_for

    rows = join_rows(report.kernels, counts)
    redo = rows["bytes_source"].eq("counters")
    if redo.any():
        rows = pd.concat([rows[~redo], judge_rows(rows[redo], report.device, peaks_for(report.device["id"],
                                                                                    rows.loc[redo, "dtype"]))])
        rows = rows.sort_values("time_per_step_us", ascending=False, kind="stable").reset_index(drop=True)
    report.kernels = rows
    report.summary.setdefault("counters_error", "")


def join_ncu(report, ncu_trace: pd.DataFrame) -> None:
    """ncu's kernels of the step (one run inside ``bwprof.counters``, in launch order) joined to
    the first timed run's launches of the report."""
    first = report.launches[report.launches["repeat"] == 0]
    measured = ncu_trace.sort_values("correlation_id", kind="stable").reset_index(drop=True) \
        if "correlation_id" in ncu_trace else ncu_trace
    joined = match_in_order(first, measured)
    report.summary["counters_matched"] = f"{len(joined)} of {int((first['kind'] == 'kernel').sum())} kernels"
    apply_counts(report, per_row(joined, "ncu"))
