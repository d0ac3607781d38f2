"""A step's rows judged like bwprof's own: each row gets the roofs a measured row of its dtype
carries (the device's measured peaks; the matrix units' roof for matmul, convolution and attention
work in FP16/BF16, the vector roof otherwise; the size-aware ceiling's line for its mix of reads
and writes) and goes through the core's one judgement (``roofline.classify``, ``_core.judge``)."""
from __future__ import annotations

import math

import pandas as pd

from .. import _core
from ..roofline import classify

MATRIX_DTYPES = ("fp16", "bf16")
ROOF_COLUMNS = ["peak_bandwidth_gbs", "theoretical_bandwidth_gbs", "peak_gflops", "peak_compute_arithmetic",
                "peak_compute_source",
                "peak_l2_gbs", "peak_l1_gbs", "size_fixed_cost_us", "size_bandwidth_gbs"]
JUDGED_COLUMNS = ["bandwidth_gbs", "bandwidth_pct_peak", "bandwidth_pct_attainable", "gflops", "compute_pct_peak",
                  "intensity_flop_per_byte", "ceiling_name", "bound", "grade", "above_peak", "bottleneck"]


def _pos(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f if math.isfinite(f) and f > 0 else math.nan


def peaks_for(device: str, dtypes) -> dict:
    """The device's peaks per dtype (measured once per process by ``bwprof.peaks``)."""
    from ..api import peaks

    return {dt: peaks(device, dt) for dt in dict.fromkeys(dtypes)}


def _roofs(p: dict, dtype: str, matrix: bool, write_fraction: float) -> dict:
    mx = _pos(p.get("matrix_gflops"))
    on_matrix = matrix and not math.isnan(mx)
    line = _core.size_line(p, write_fraction if math.isfinite(write_fraction) else 0.0)
    if on_matrix:
        src = f"measured matrix units ({p.get('matrix_source') or 'mma_peak'})"
        arith = f"{dtype} matrix"
    else:  # what the dtype's rows compute in (FP32 for every dtype: bwprof.peaks())
        src = str(p.get("compute_source") or "measured")
        arith = str(p.get("compute_arithmetic") or "")
    return {"peak_bandwidth_gbs": _pos(p.get("bandwidth_gbs")),
            "theoretical_bandwidth_gbs": _pos(p.get("bandwidth_theoretical_gbs")),
            "peak_gflops": mx if on_matrix else _pos(p.get("gflops")), "peak_compute_arithmetic": arith,
            "peak_compute_source": src,
            "peak_l2_gbs": _pos(p.get("l2_gbs")), "peak_l1_gbs": _pos(p.get("l1_gbs")),
            "size_fixed_cost_us": float(line["t0_us"]) if _pos(line["bandwidth_gbs"]) > 0 else math.nan,
            "size_bandwidth_gbs": _pos(line["bandwidth_gbs"])}


def judge_rows(rows: pd.DataFrame, device: dict, peaks: dict) -> pd.DataFrame:
    """``rows`` (bytes_read, bytes_written, flops per call, time_median_us, dtype, matrix) with
    their roofs and the judgement (JUDGED_COLUMNS). A row whose bytes are unknown is not judged:
    its bound is "unknown" and its text says so. Unknown FLOPs (flops_source "unknown") go to the core as unknown, so bandwidth alone judges such a row only where it proves it memory-bound."""
    out = rows.copy()
    roofs = []
    for _, r in out.iterrows():
        rd, wr = float(r["bytes_read"]), float(r["bytes_written"])
        w = wr / (rd + wr) if rd + wr > 0 else 0.0
        roofs.append(_roofs(peaks[r["dtype"]], r["dtype"], bool(r["matrix"]) and r["dtype"] in MATRIX_DTYPES, w))
    for c in ROOF_COLUMNS:
        out[c] = [x[c] for x in roofs]
    # A copy between host and device crosses the host link, not the memory: its GB/s is shown, not judged.
    transfer = out["kind"].eq("memcpy") & ~out["kernel_name"].astype(str).str.contains("DtoD|Device -> Device")
    known = out["bytes_read"].notna() & out["bytes_written"].notna() & (out["time_median_us"] > 0) & ~transfer
    for c in JUDGED_COLUMNS:
        out[c] = pd.Series([math.nan] * len(out), index=out.index, dtype=object if c in (
            "ceiling_name", "bound", "grade", "bottleneck", "above_peak") else float)
    if known.any():
        part = out[known].assign(cache="",
                                 bandwidth_gbs=math.nan, gflops=math.nan)
        j = classify(part, info=device, rates=True)
        for c in JUDGED_COLUMNS:
            out.loc[known, c] = j[c].values if c != "ceiling_name" else j["ceiling_name"].values
    out.loc[~known, "bound"] = "unknown"
    out.loc[~known, "above_peak"] = False
    out.loc[~known, "grade"] = ""
    on = out["bytes_on"] if "bytes_on" in out else pd.Series([""] * len(out), index=out.index)
    out.loc[~known, "bottleneck"] = [_unjudged(src, tr, carrier, op)
                                     for src, tr, carrier, op in zip(out.loc[~known, "bytes_source"], transfer[~known],
                                                                     on[~known], out.loc[~known, "op"])]
    return out


def _unjudged(source: str, transfer: bool, carrier, op) -> str:
    """Why a row was not judged."""
    if transfer:
        return ("a copy between host and device: it crosses the host link (bwprof.host_links()), not judged "
                "against the memory roof")
    if source != "unknown":
        return "not judged"
    if isinstance(carrier, str) and carrier:
        return (f"bytes counted on {carrier} of the same {op}: an op's bytes and FLOPs go to one of its kernels "
                f"(its longest), not to each; this kernel's own traffic is unknown (counters='dram' measures it)")
    return ("no bytes known for this kernel (no op was matched to it): mark it with "
            "bwprof.region(..., bytes_read=, bytes_written=)")
