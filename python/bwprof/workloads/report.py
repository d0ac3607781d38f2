"""A workload's report from its measurements: the ops of every step with their share, the steps
whole against the sum of their parts (the gaps), the category breakdown and Amdahl table (the trace
analysis's own functions over the ops), the bounds (bytes over the measured bandwidth, FLOPs over
the measured compute) and the what-if rows (each fusion measured, beside the seeds' estimate)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from .. import traces as _traces
from ..tables import flagged
from .ops import Workload

NAN = math.nan
# A step faster than its bound by more than this is above a measured roof (the core's
# kAboveMeasuredFactor, 1.10, for a row against its peak): its bytes or FLOPs are wrong, or cached.
ABOVE_BOUND_PCT = 110.0
OP_COLUMNS = ["step", "op", "category", "kernel", "variant", "dtype", "shape", "count", "time_us", "total_us",
              "share_pct", "step_share_pct", "bytes_per_launch", "bandwidth_gbs", "bandwidth_pct_peak", "gflops",
              "compute_pct_peak", "bound", "grade", "above_peak", "verified", "timing", "cache", "timed_launches", "timed_sets",
              "sets", "fusion", "form"]
STEP_COLUMNS = ["step", "fusions", "ops", "launches", "time_us", "time_min_us", "time_cv", "parts_us", "gap_us",
                "gap_pct", "gap_per_launch_us", "mode", "verified", "items_per_s", "item", "bytes_per_step",
                "model_bytes", "achieved_gbs", "flops_per_step", "bytes_bound_us", "compute_bound_us", "bound_us",
                "pct_of_bound", "above_peak", "bound_items_per_s", "size_bound_us", "host_bytes", "device_bytes", "sm_clock_mhz"]
WHATIF_COLUMNS = ["fusion", "what", "before_step", "after_step", "ops_before", "ops_after", "ops_before_us",
                  "ops_after_us", "ops_speedup_pct", "step_before_us", "step_after_us", "overall_speedup_pct",
                  "parts_estimate_pct", "seeds_estimate", "seeds_estimate_pct", "seeds_scope", "measured_vs_seeds_pct"]


@dataclass
class Report:
    """Everything one workload run measured and derived (DataFrames; see docs/model.md)."""

    workload: Workload
    device: dict
    ops: pd.DataFrame
    steps: pd.DataFrame
    categories: pd.DataFrame
    amdahl: pd.DataFrame
    whatif: pd.DataFrame
    rows: pd.DataFrame
    summary: dict = field(default_factory=dict)
    main_step: str = "step"

    def save(self, out_dir=None, *, plots: bool = True):
        """The run folder ``<out_dir or results>/<run_id>/``: the ops' result rows (results.csv,
        rows.jsonl, bandwidth_report.json, as ``bench`` writes them), the model tables
        (model_*.csv), model_report.json, and the charts; returns its path."""
        from .output import save_report
        return save_report(self, out_dir, plots=plots)

    def plot(self, out_dir) -> list:
        """The stacked breakdown and the what-if chart into ``out_dir`` (PNG and SVG)."""
        from .output import plot_report
        return plot_report(self, out_dir)

    def text(self) -> str:
        """The report as the CLI prints it."""
        from .output import report_text
        return report_text(self)

    def _repr_html_(self) -> str:
        """Jupyter's display: the verdict, the steps and the main step's ops."""
        from ..display import model_html
        return model_html(self)

    def __repr__(self) -> str:
        s = self.summary
        return (f"<bwprof model report {self.workload.name}: step {s.get('step_us', NAN):.1f} us on "
                f"{self.device.get('name', '?')}, {len(self.ops)} op rows>")


def _num(row: dict, key: str) -> float:
    v = row.get(key)
    try:
        return float(v) if v is not None else NAN
    except (TypeError, ValueError):
        return NAN


def _trace_frame(ops: pd.DataFrame) -> pd.DataFrame:
    """The ops as a kernel trace (one row per op, its launches and total time), for the trace
    analysis's breakdown and Amdahl table."""
    return pd.DataFrame({"kernel_name": ops["op"].astype(str), "category": ops["category"].astype(str),
                         "duration_ns": ops["total_us"].astype(float) * 1e3, "calls": ops["count"].astype(int)})


def _bounds(w: Workload, plan: dict, ops: pd.DataFrame, peaks: dict) -> dict:
    bw = float(peaks.get("bandwidth_gbs") or 0)
    matrix = float(peaks.get("matrix_gflops") or 0)
    roof = matrix if matrix > 0 and w.dtype == "fp16" else float(peaks.get("gflops") or 0)
    model_bytes = float(w.info.get("model_bytes", plan["bytes_per_step"]))
    flops = float((ops["count"] * ops["flops"]).sum())
    bytes_us = model_bytes / (bw * 1e3) if bw > 0 else NAN
    compute_us = flops / (roof * 1e3) if roof > 0 else NAN
    curve = peaks.get("size_curve") or {}
    t0, cbw = curve.get("t0_us"), curve.get("bandwidth_gbs")
    size_us = NAN
    if t0 is not None and cbw and t0 == t0 and cbw == cbw:
        size_us = float((ops["count"] * (t0 + ops["bytes_per_launch"] / (cbw * 1e3))).sum())
    bound = max(x for x in (bytes_us, compute_us) if x == x) if (bytes_us == bytes_us or compute_us == compute_us) \
        else NAN
    return {"model_bytes": model_bytes, "flops_per_step": flops, "bytes_bound_us": bytes_us,
            "compute_bound_us": compute_us, "bound_us": bound, "size_bound_us": size_us}


def parts_timing(ops: pd.DataFrame) -> str:
    """How the parts (the ops on their own) were timed, in words, for the tables and the JSON."""
    if not len(ops):
        return ""
    distinct = ops.drop_duplicates("op")
    timing = distinct["timing"].astype(str)
    said = []
    if (timing == "graph").any():
        cold = (distinct["cache"].astype(str) == "cold") & (timing == "graph")
        said.append("each op timed on its own in its steady state: launches back to back in one graph"
                    + (" over rotated input sets (together more than twice the last-level cache)" if cold.any() else "")
                    + ", the time per launch, as the step runs them")
    if (timing == "single").any():
        who = ", ".join(distinct.loc[timing == "single", "op"]) if (timing != "single").any() else "each op"
        said.append(f"{who}: one launch after the cache flush, which pays the launch and timing floor a graph "
                    "does not (the gap then holds that floor too)")
    if (timing == "stream").any():
        who = ", ".join(distinct.loc[timing == "stream", "op"])
        said.append(f"{who}: calls back to back on the stream (their work cannot be captured in a graph)")
    return "; ".join(said)


def build_report(w: Workload, dev: dict, steps: list, by_op: dict, timed: dict, peaks: dict, options: dict) -> Report:
    op_rows, step_rows, cat_frames = [], [], []
    items = w.info.get("items_per_step")
    item = w.info.get("item", "")
    for name, applied, ops in steps:
        t = timed[name]
        whole = float(t["time_us"]["median"])
        sets = {o["name"]: o["sets"] for o in t["ops"]}
        rows = []
        for op in ops:
            m = by_op[op.name]
            per = _num(m, "time_median_us")
            rows.append({"step": name, "op": op.name, "category": op.category, "kernel": m.get("kernel"),
                         "variant": m.get("variant"), "dtype": m.get("dtype"), "shape": m.get("shape"),
                         "count": op.count, "time_us": per, "total_us": per * op.count,
                         "bytes_per_launch": _num(m, "bytes_read") + _num(m, "bytes_written"),
                         "flops": _num(m, "flops"), "bandwidth_gbs": _num(m, "bandwidth_gbs"),
                         "bandwidth_pct_peak": _num(m, "bandwidth_pct_peak"), "gflops": _num(m, "gflops"),
                         "compute_pct_peak": _num(m, "compute_pct_peak"), "bound": m.get("bound"),
                         "grade": m.get("grade"), "above_peak": flagged(m.get("above_peak")),
                         "verified": bool(m.get("verified")) or op.is_user,
                         "timing": m.get("timing"), "cache": m.get("cache"),
                         "timed_launches": int(m.get("graph_launches") or 1),
                         "timed_sets": int(m.get("rotation_sets") or 1), "sets": sets.get(op.name, 1),
                         "fusion": op.fusion or "", "form": op.form or ""})
        df = pd.DataFrame(rows)
        parts = float(df["total_us"].sum())
        df["share_pct"] = 100.0 * df["total_us"] / parts if parts > 0 else NAN
        df["step_share_pct"] = 100.0 * df["total_us"] / whole if whole > 0 else NAN
        op_rows.append(df)
        cats = _traces.breakdown(_trace_frame(df), by="category")
        cats.insert(0, "step", name)
        cats["total_time_us"] = cats.pop("total_time_ns") / 1e3
        cats["avg_time_us"] = cats.pop("avg_time_ns") / 1e3
        cats["pct_of_step"] = 100.0 * cats["total_time_us"] / whole if whole > 0 else NAN
        cats = cats.rename(columns={"pct_gpu_time": "pct_of_parts", "calls": "launches"})
        cat_frames.append(cats[["step", "category", "total_time_us", "launches", "avg_time_us", "pct_of_parts",
                                "pct_of_step"]])
        b = _bounds(w, t, df, peaks)
        gap = whole - parts
        pct_of_bound = 100.0 * b["bound_us"] / whole if whole > 0 else NAN
        step_rows.append({
            "step": name, "fusions": "+".join(applied) if applied else ("none" if w.fusions else ""),
            "ops": len(ops), "launches": t["launches"], "time_us": whole, "time_min_us": t["time_us"]["min"],
            "time_cv": t["time_us"]["cv"], "parts_us": parts, "gap_us": gap,
            "gap_pct": 100.0 * gap / whole if whole > 0 else NAN,
            "gap_per_launch_us": gap / t["launches"] if t["launches"] else NAN, "mode": t["mode"],
            "verified": bool(t["verified"]) and bool(df["verified"].all()),
            "items_per_s": items / (whole * 1e-6) if items and whole > 0 else NAN, "item": item,
            "bytes_per_step": t["bytes_per_step"], **b,
            "achieved_gbs": b["model_bytes"] / (whole * 1e3) if whole > 0 else NAN,
            "pct_of_bound": pct_of_bound,
            # Above a roof: an op's figure above its peak, or the step faster than its bound allows.
            "above_peak": bool(df["above_peak"].any()) or pct_of_bound > ABOVE_BOUND_PCT,
            "bound_items_per_s": items / (b["bound_us"] * 1e-6) if items and b["bound_us"] > 0 else NAN,
            "host_bytes": t["host_bytes"], "device_bytes": t["device_bytes"], "sm_clock_mhz": t["sm_clock_mhz"],
            "graph_error": t["graph_error"]})
    ops_df = pd.concat(op_rows, ignore_index=True)
    steps_df = pd.DataFrame(step_rows)
    main = "fused" if w.fusions else "step"
    main_ops = ops_df[ops_df["step"] == main]
    amdahl = _traces.amdahl(_trace_frame(main_ops), by="category", factors=(2.0, 10.0))
    amdahl["total_time_us"] = amdahl.pop("total_time_ns") / 1e3
    amdahl.insert(0, "step", main)
    amdahl = amdahl[["step", "category", "total_time_us"] + [c for c in amdahl.columns
                                                                if c not in ("step", "category", "total_time_us")]]
    whatif = _whatif(w, ops_df, steps_df)
    rows = _result_rows(w, by_op)
    srow = steps_df.set_index("step").loc[main]
    summary = {"workload": w.name, "title": w.info.get("title", w.name), "device": dev.get("id"),
               "device_name": dev.get("name"), "main_step": main, "step_us": float(srow["time_us"]),
               "parts_us": float(srow["parts_us"]), "gap_us": float(srow["gap_us"]),
               "gap_pct": float(srow["gap_pct"]), "launches": int(srow["launches"]), "mode": srow["mode"],
               "items_per_s": float(srow["items_per_s"]), "item": item,
               "bound_us": float(srow["bound_us"]), "pct_of_bound": float(srow["pct_of_bound"]),
               "above_peak": bool(srow["above_peak"]),
               "ops_above_peak": sorted(set(main_ops.loc[main_ops["above_peak"], "op"])),
               "bound_items_per_s": float(srow["bound_items_per_s"]),
               "peak_bandwidth_gbs": float(peaks.get("bandwidth_gbs") or 0),
               "peak_bandwidth_source": peaks.get("bandwidth_source", ""),
               "verified": bool(steps_df["verified"].all()), "parts_timing": parts_timing(main_ops),
               "options": options, "info": dict(w.info)}
    return Report(w, dev, ops_df[OP_COLUMNS], steps_df[STEP_COLUMNS + ["graph_error"]], pd.concat(cat_frames, ignore_index=True),
                  amdahl, whatif, rows, summary, main)


def _whatif(w: Workload, ops: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """One row per fusion (the separate step against the step with that fusion alone) and, with
    several, one for all of them (separate against fused)."""
    if not w.fusions:
        return pd.DataFrame(columns=WHATIF_COLUMNS)
    whole = steps.set_index("step")["time_us"]
    parts = steps.set_index("step")["parts_us"]
    base = ops[ops["step"] == "separate"]
    fused = ops[ops["step"] == "fused"]
    rows = []
    names = list(w.fusions)
    for f in names + (["all"] if len(names) > 1 else []):
        sel = (lambda df, form: df[(df["form"] == form)]) if f == "all" else \
            (lambda df, form, f=f: df[(df["fusion"] == f) & (df["form"] == form)])
        before, after = sel(base, "separate"), sel(fused, "fused")
        b_us, a_us = float(before["total_us"].sum()), float(after["total_us"].sum())
        after_step = "fused" if f == "all" or len(names) == 1 else f
        s_b, s_a = float(whole["separate"]), float(whole[after_step])
        p_b = float(parts["separate"])
        fu = w.fusions.get(f)
        est = fu.estimate_pct if fu else None
        scope = fu.estimate_scope if fu else ""
        overall = 100.0 * (s_b / s_a - 1.0) if s_a > 0 else NAN
        on_ops = 100.0 * (b_us / a_us - 1.0) if a_us > 0 else NAN
        measured = overall if scope == "overall" else on_ops
        rows.append({
            "fusion": f, "what": fu.label if fu else "every fusion at once", "before_step": "separate",
            "after_step": after_step, "ops_before": ", ".join(before["op"]), "ops_after": ", ".join(after["op"]),
            "ops_before_us": b_us, "ops_after_us": a_us, "ops_speedup_pct": on_ops, "step_before_us": s_b,
            "step_after_us": s_a, "overall_speedup_pct": overall,
            "parts_estimate_pct": 100.0 * (p_b / (p_b - b_us + a_us) - 1.0) if p_b - b_us + a_us > 0 else NAN,
            "seeds_estimate": fu.estimate if fu else "", "seeds_estimate_pct": est if est is not None else NAN,
            "seeds_scope": scope, "measured_vs_seeds_pct": measured - est if est is not None else NAN})
    return pd.DataFrame(rows, columns=WHATIF_COLUMNS)


def _result_rows(w: Workload, by_op: dict) -> pd.DataFrame:
    """The distinct ops' bwprof result rows (the schema's columns), each labelled with the ops it
    stands for: what results.csv of the run folder holds."""
    seen, rows = {}, []
    for op in w.ops:
        m = by_op[op.name]
        key = id(m)
        if key in seen:
            seen[key]["op"] += f", {op.name}"
            continue
        row = dict(m)
        row.update({"label": f"{w.name} {op.name}", "op": op.name, "category": op.category, "count": op.count})
        seen[key] = row
        rows.append(row)
    return pd.DataFrame(rows)
