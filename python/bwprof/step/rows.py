"""The step's kernel rows: its launches grouped by kernel, the op that launched it and its shapes
(one row per kernel of an op, whatever the layer; the module column then shows the layers as '*'),
with calls and times per step (medians over the timed runs), shares of the step, and the traffic
per call; a region's launches form one row, with the traffic it declared."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .attribute import module_pattern

REGION_OP = "bwprof.region"
KEY = ["kernel_name", "op", "shape", "region"]


def region_launches(launches: pd.DataFrame, calls: dict) -> pd.DataFrame:
    """The launches inside regions collapsed to one per region call (its kernels' time summed),
    with the traffic the call declared; ``calls``: {(repeat, region, call): RegionCall}. The
    launches outside regions are returned unchanged, after them."""
    inside = launches[launches["region"] != ""]
    rows = []
    for (rep, name, call), g in inside.groupby(["repeat", "region", "region_call"], sort=False):
        rc = calls.get((rep, name, call))
        rows.append(region_row(rep, name, rc, float(g["duration_us"].sum()), int(g["start_ns"].min()),
                               int(g["end_ns"].max()), kernels=len(g)))
    out = launches[launches["region"] == ""]
    return pd.concat([out, pd.DataFrame(rows)], ignore_index=True) if rows else out


def region_row(repeat: int, name: str, rc, duration_us: float, start_ns: int, end_ns: int, *,
               kernels: int = 1) -> dict:
    """One launch-table row standing for one region call."""
    nan = math.nan
    br = rc.bytes_read if rc is not None else nan
    bw = rc.bytes_written if rc is not None else nan
    fl = rc.flops if rc is not None else nan
    declared = not (math.isnan(br) or math.isnan(bw))
    return {"repeat": repeat, "kernel_name": name, "kind": "region", "start_ns": start_ns, "end_ns": end_ns,
            "duration_us": duration_us, "stream": 0, "op": REGION_OP, "module": "", "record": -1,
            "op_instance": f"{repeat}:{name}:{rc.call if rc is not None else 0}", "op_kernels": kernels,
            "region": name, "region_call": rc.call if rc is not None else 0, "launch_ns": start_ns,
            "bytes_read": br, "bytes_written": bw, "flops": fl,
            "bytes_source": "declared" if declared else "unknown",
            "flops_source": "declared" if not math.isnan(fl) else "unknown",
            "dtype": getattr(rc, "dtype", "fp32") if rc is not None else "fp32",
            "tensor_dtype": "", "shape": "", "matrix": bool(getattr(rc, "matrix", False)), "bytes_on": ""}


def _mean_known(s: pd.Series) -> float:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.mean()) if len(s) else math.nan


def _source(values: pd.Series) -> str:
    known = [v for v in values if v != "unknown"]
    if not known:
        return "unknown"
    return known[0] if len(set(known)) == 1 else "mixed"


def _first_named(values: pd.Series) -> str:
    """The kernel a row's op counted its bytes on ("" where the row carries them or has no op)."""
    named = [v for v in values if isinstance(v, str) and v]
    return named[0] if named else ""


def kernel_rows(launches: pd.DataFrame, repeats: int, wall_us: float, busy_us: float) -> pd.DataFrame:
    """One row per (kernel, op, shapes, region), largest time per step first."""
    if not len(launches):
        return pd.DataFrame()
    from ..traces.categories import category_of  # the trace readers load only when a report is made
    from ..traces.names import short_kernel_name

    rows = []
    for key, g in launches.groupby(KEY, sort=False, dropna=False):
        per = g.groupby("repeat")["duration_us"].agg(["sum", "count"]).reindex(range(repeats), fill_value=0)
        per_step = float(np.median(per["sum"]))
        calls = float(np.median(per["count"]))
        ran = per[per["count"] > 0]
        per_call = float(np.median(ran["sum"] / ran["count"])) if len(ran) else math.nan
        name = str(key[0])
        kind = str(g["kind"].iloc[0])
        rows.append({
            "kernel": name if kind == "region" else short_kernel_name(name), "kernel_name": name, "kind": kind,
            "op": key[1], "module": module_pattern(g["module"]), "region": key[3],
            "category": "region" if kind == "region" else category_of(name),
            "dtype": g["dtype"].iloc[0], "tensor_dtype": g["tensor_dtype"].iloc[0], "shape": key[2],
            "matrix": bool(g["matrix"].any()), "calls_per_step": calls, "time_median_us": per_call,
            "time_min_us": float(g["duration_us"].min()), "time_max_us": float(g["duration_us"].max()),
            "time_per_step_us": per_step,
            "step_share_pct": 100.0 * per_step / wall_us if wall_us > 0 else math.nan,
            "busy_share_pct": 100.0 * per_step / busy_us if busy_us > 0 else math.nan,
            "bytes_read": _mean_known(g["bytes_read"]), "bytes_written": _mean_known(g["bytes_written"]),
            "bytes_source": _source(g["bytes_source"]), "flops": _mean_known(g["flops"]),
            "flops_source": _source(g["flops_source"]), "op_kernels": int(g["op_kernels"].max()),
            "bytes_on": _first_named(g["bytes_on"]) if "bytes_on" in g else ""})
    out = pd.DataFrame(rows)
    return out.sort_values("time_per_step_us", ascending=False, kind="stable").reset_index(drop=True)
