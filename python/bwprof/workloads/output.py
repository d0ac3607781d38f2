"""A workload report on disk and on screen: the run folder (bench's RunWriter for the ops' result
rows, the one atomic writer for the model's tables and JSON), the charts, the printed tables."""
from __future__ import annotations

import datetime as _dt
import io
import json
import math
import os
from pathlib import Path

import pandas as pd

from .. import _core
from .. import tables as _tables
from ..files import atomic_write_text
from ..results import RunWriter

TABLES = {"ops": "model_ops.csv", "steps": "model_steps.csv", "categories": "model_categories.csv",
          "amdahl": "model_amdahl.csv", "whatif": "model_whatif.csv"}
REPORT_JSON = "model_report.json"
CHARTS = ("model_breakdown", "model_whatif")


def _plain(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return _plain(v.item())
    return v


def _records(df: pd.DataFrame) -> list:
    return [_plain(r) for r in df.to_dict("records")]


def save_report(report, out_dir=None, *, plots: bool = True) -> Path:
    cols = list(_core.columns()) + ["label", "op", "category", "count"]
    info = report.workload.info
    what = [report.workload.name] + [str(info[k]) for k in ("decoder", "weights") if k in info]
    now = _dt.datetime.now(_dt.timezone.utc)
    dev = str(report.device.get("id", "unknown")).replace(":", "").replace(os.sep, "_")
    run_id = f"{now:%Y%m%d-%H%M%S}-{dev}-" + "-".join(what)
    with RunWriter(out_dir, report.device, run_id=run_id, columns=cols) as w:
        for row in report.rows.to_dict("records"):
            w.add({str(k): v for k, v in row.items()})
    folder = w.path
    for attr, name in TABLES.items():
        buf = io.StringIO()
        getattr(report, attr).to_csv(buf, index=False)
        atomic_write_text(folder / name, buf.getvalue())
    doc = {"summary": _plain(report.summary), "device": _plain(report.device),
           **{attr: _records(getattr(report, attr)) for attr in TABLES}}
    atomic_write_text(folder / REPORT_JSON, json.dumps(doc, indent=1, default=str))
    if plots:
        try:
            plot_report(report, folder)
        except Exception as e:  # noqa: BLE001 - the measurements are already on disk
            print(f"plots: not drawn ({type(e).__name__}: {e})")
        try:  # the interactive report beside the charts, as bench writes it
            from ..html import report as html_report
            html_report(folder)
        except Exception as e:  # noqa: BLE001 - the measurements are already on disk
            print(f"html report: not written ({type(e).__name__}: {e})")
    return folder


def plot_report(report, out_dir) -> list[Path]:
    from ..plots.figure import NoData
    from ..plots.model_chart import step_breakdown, whatif_chart

    folder = Path(out_dir)
    name = report.summary.get("device_name")
    title = report.summary.get("title", report.workload.name)
    out = []
    fig = step_breakdown(report.categories, report.steps, folder / CHARTS[0],
                         title=f"{title}\nwhere the time goes" + (f" on {name}" if name else ""))
    out += fig._bwprof_paths
    try:
        fig = whatif_chart(report.whatif, folder / CHARTS[1],
                           title=f"{title}\nwhat each fusion buys" + (f" on {name}" if name else ""))
        out += fig._bwprof_paths
    except NoData:
        pass
    return out


OPS_TABLE = [("op", "op", "{}"), ("category", "category", "{}"), ("kernel", "kernel", "{}"),
             ("variant", "variant", "{}"), ("shape", "shape", "{}"), ("count", "count", "{:d}"),
             ("time_us", "us/launch", "{:.2f}"), ("total_us", "us/step", "{:.1f}"), ("share_pct", "%parts", "{:.1f}"),
             ("bandwidth_gbs", "GB/s", "{:.0f}"), ("gflops", "GFLOP/s", "{:.0f}"), ("bound", "bound", "{}"),
             ("timing", "timed", "{}"), ("verified", "ok", "{}")]
STEPS_TABLE = [("step", "step", "{}"), ("launches", "launches", "{:d}"), ("time_us", "step us", "{:.1f}"),
               ("parts_us", "parts us", "{:.1f}"), ("gap_us", "gap us", "{:+.1f}"), ("gap_pct", "gap %", "{:+.1f}"),
               ("items_per_s", "per s", "{:.4g}"), ("bound_us", "bound us", "{:.1f}"),
               ("pct_of_bound", "%bound", "{:.0f}"), ("mode", "timed as", "{}"), ("verified", "ok", "{}")]
CATS_TABLE = [("category", "category", "{}"), ("total_time_us", "us/step", "{:.1f}"), ("launches", "launches", "{:d}"),
              ("pct_of_parts", "%parts", "{:.1f}"), ("pct_of_step", "%step", "{:.1f}")]
WHATIF_TABLE = [("fusion", "fusion", "{}"), ("ops_before_us", "ops before", "{:.1f}"),
                ("ops_after_us", "ops after", "{:.1f}"), ("ops_speedup_pct", "on ops %", "{:+.1f}"),
                ("step_before_us", "step before", "{:.1f}"), ("step_after_us", "step after", "{:.1f}"),
                ("overall_speedup_pct", "overall %", "{:+.1f}"), ("parts_estimate_pct", "from parts %", "{:+.1f}"),
                ("seeds_estimate", "seeds' estimate", "{}")]


def report_text(report) -> str:
    s = report.summary
    main = report.main_step
    lines = [f"{s['title']} on {s.get('device_name')} ({s.get('device')})"]
    item = s.get("item") or "item"
    lines.append(f"step '{main}': {s['step_us']:.1f} us whole ({s['mode']}, {s['launches']} launches); "
                 f"parts {s['parts_us']:.1f} us (ops timed: {'+'.join(s['options'].get('op_timings', []))}); "
                 f"gap {s['gap_us']:+.1f} us ({s['gap_pct']:+.1f} %)")
    mark = _tables.MARK if s.get("above_peak") else ""
    if s.get("items_per_s") == s.get("items_per_s"):
        lines.append(f"{s['items_per_s']:.5g}{mark} {item}s/s; bound {s['bound_us']:.1f} us "
                     f"({s['bound_items_per_s']:.5g} {item}s/s at {s['peak_bandwidth_gbs']:.0f} GB/s measured): "
                     f"the step runs at {s['pct_of_bound']:.0f}{mark} % of its bound")
    if s.get("above_peak"):
        ops_above = s.get("ops_above_peak") or []
        lines.append(f"{_tables.MARK} ABOVE A MEASURED ROOF: " +
                     (f"op(s) {', '.join(ops_above)} run above their peak" if ops_above else
                      f"the step runs at {s['pct_of_bound']:.0f} % of its bound") +
                     "; the data was in a cache, or the declared bytes or FLOPs are wrong, so these figures are "
                     "no utilization")
    ops = report.ops[report.ops["step"] == main]
    lines += ["", f"ops of step '{main}' ({s.get('parts_timing', '')}):", _tables.format_table(ops, OPS_TABLE)]
    lines += ["", "steps (whole as timed, against the sum of their ops timed as above; "
              "gap = whole - parts: time between and across launches that the parts do not hold):",
              _tables.format_table(report.steps, STEPS_TABLE)]
    cats = report.categories[report.categories["step"] == main]
    lines += ["", f"categories of step '{main}':", _tables.format_table(cats, CATS_TABLE)]
    if len(report.whatif):
        lines += ["", "what-if (measured; speed-up = time before / time after - 1):",
                  _tables.format_table(report.whatif, WHATIF_TABLE)]
    if not s.get("verified", True):
        lines += ["", "WARNING: an op's output did not match its reference"]
    return "\n".join(lines)
