"""A step's first timed run as a Chrome/Perfetto trace: one complete event per launch on its
stream's track, with its op, module and its row's achieved rates and bound in the event's args, so
it opens in Perfetto (ui.perfetto.dev) or chrome://tracing beside PyTorch's own traces."""
from __future__ import annotations

import json
import math

from ..files import atomic_write_text
from .rows import KEY

ARGS = ("bandwidth_gbs", "bandwidth_pct_peak", "bandwidth_pct_attainable", "gflops", "compute_pct_peak", "bound")


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v.item() if hasattr(v, "item") else v


def write_trace(report, path):
    from .. import arguments as _args
    from ..files import check_output_file

    p = check_output_file("path", _args.path("path", path))
    runs = report.launches
    first = runs[runs["repeat"] == runs["repeat"].min()] if len(runs) else runs
    rows = {tuple(r[k] for k in KEY): r for r in report.kernels.to_dict("records")} if len(report.kernels) else {}
    t0 = int(first["start_ns"].min()) if len(first) else 0
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": f"bwprof step {report.name}"}}]
    for r in first.to_dict("records"):
        key = (r["kernel_name"], r["op"], r.get("shape", ""), r.get("region", ""))
        row = rows.get(key, {})
        args = {"op": r["op"], "module": r.get("module", ""), **{a: _clean(row.get(a)) for a in ARGS}}
        events.append({"ph": "X", "name": r["kernel_name"], "cat": r["kind"], "pid": 1, "tid": int(r["stream"]),
                       "ts": (int(r["start_ns"]) - t0) / 1e3, "dur": float(r["duration_us"]), "args": args})
    atomic_write_text(p, json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}))
    return p
