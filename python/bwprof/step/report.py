"""A step's report: its kernel rows, its summary (wall, busy and idle time, the verdict), the ops
the dispatcher saw and every launch of the timed runs; printed, saved to a run folder (bench's
RunWriter for the rows, the one atomic writer for the rest), loaded back, drawn, and exported as a
Chrome/Perfetto trace."""
from __future__ import annotations

import datetime as _dt
import io
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import arguments as _args
from .. import tables as _tables

KERNEL_COLUMNS = [
    "kernel", "op", "module", "region", "kind", "category", "dtype", "tensor_dtype", "shape", "calls_per_step",
    "time_median_us", "time_min_us", "time_max_us", "time_per_step_us", "step_share_pct", "busy_share_pct",
    "bytes_read", "bytes_written", "bytes_source", "flops", "flops_source", "op_kernels", "bytes_on", "bandwidth_gbs",
    "bandwidth_pct_peak", "bandwidth_pct_attainable", "gflops", "compute_pct_peak", "intensity_flop_per_byte",
    "ceiling_name", "bound", "grade", "above_peak", "bottleneck", "dram_bytes_read", "dram_bytes_written",
    "dram_bandwidth_gbs", "dram_ratio", "counter_time_us", "counters_source", "matrix", "peak_bandwidth_gbs",
    "theoretical_bandwidth_gbs", "peak_gflops", "peak_compute_arithmetic", "peak_compute_source", "peak_l2_gbs",
    "peak_l1_gbs", "size_fixed_cost_us", "size_bandwidth_gbs", "kernel_name"]
FILES = {"summary": "step_report.json", "launches": "step_launches.csv", "ops": "step_ops.csv"}
CHARTS = ("step_roofline", "step_time")
UNITS = {"_us": "microseconds", "_pct": "percent", "_gbs": "GB/s (10^9 bytes per second)",
         "gflops": "GFLOP/s", "bytes_": "bytes per call", "flops": "FLOP per call", "_ns": "nanoseconds",
         "calls_per_step": "calls per step", "kernels_per_ms": "launches per millisecond of wall time",
         "_flop_per_byte": "FLOP per byte"}

TABLE = [("kernel", "kernel", "{}"), ("op", "op", "{}"), ("calls_per_step", "calls", "{:.0f}"),
         ("time_median_us", "us/call", "{:.2f}"), ("time_per_step_us", "us/step", "{:.1f}"),
         ("step_share_pct", "%step", "{:.1f}"), ("bandwidth_gbs", "GB/s", "{:.0f}"),
         ("bandwidth_pct_peak", "%peak_bw", "{:.0f}"), ("gflops", "GFLOP/s", "{:.0f}"),
         ("compute_pct_peak", "%peak_fl", "{:.0f}"), ("bound", "bound", "{}"), ("bytes_source", "bytes", "{}")]


def _idle_parts(s: dict, prefix: str) -> str:
    """The idle time's four parts as the text shows them (``prefix`` "profiled_": the profiled run's)."""
    return (f"before the first launch {s[prefix + 'idle_before_first_us']:.1f}, gaps between launches "
            f"{s[prefix + 'idle_launch_gaps_us']:.1f}, after host waits {s[prefix + 'idle_host_wait_us']:.1f}, "
            f"after the last {s[prefix + 'idle_after_last_us']:.1f}")


def _unknown_notes(rows: pd.DataFrame) -> list[str]:
    """One line per shown row of bound "unknown": why it was not judged (its bottleneck text)."""
    out = []
    for r in rows[rows["bound"].astype(str) == "unknown"].itertuples():
        why = str(r.bottleneck) if isinstance(r.bottleneck, str) else ""
        line = f"  unknown: {r.kernel}" + (f" ({r.op})" if r.op else "") + (f": {why}" if why else "")
        if line not in out:
            out.append(line)
    return out


def unit_of(column: str) -> str:
    """The unit a column's name says (its suffix), for the JSON's units table."""
    for key, unit in UNITS.items():
        if column.endswith(key) or column.startswith(key) or column == key:
            return unit
    return ""


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


@dataclass
class StepReport:
    """What :func:`bwprof.profile_step` measured (docs/step.md): ``kernels`` (DataFrame, one row
    per kernel and op), ``summary`` (dict), ``ops`` (the inference run's ops), ``launches`` (every
    launch of the timed runs)."""

    name: str
    device: dict
    kernels: pd.DataFrame
    summary: dict
    ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    launches: pd.DataFrame = field(default_factory=pd.DataFrame)
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        if len(self.kernels):
            for c in KERNEL_COLUMNS:
                if c not in self.kernels:
                    self.kernels[c] = math.nan if c not in ("counters_source", "bytes_on") else ""
            self.kernels = self.kernels[KERNEL_COLUMNS + [c for c in self.kernels if c not in KERNEL_COLUMNS]]

    @property
    def verdict(self) -> str:
        return str(self.summary.get("verdict_text", ""))

    def text(self, top: int = 15) -> str:
        """The report as the CLI prints it: the verdict, the time split, the top kernel rows."""
        s = self.summary
        lines = [f"step {self.name!r} on {s.get('device_name')} ({s.get('device')}), {s.get('mode')}: "
                 f"{s.get('repeats')} timed runs", s.get("verdict_text", "")]
        lines.append(f"wall {s['wall_us']:.1f} us per step; busy {s['busy_us']:.1f} us ({s['busy_pct']:.1f} %); "
                     f"idle {s['idle_us']:.1f} us: " + _idle_parts(s, ""))
        if "profiled_idle_us" in s and s["profiled_wall_us"] != s["wall_us"]:
            lines.append(f"  (the idle split is the profiled run's, scaled by {s['idle_scale']:.3g} to the plain runs' "
                         f"idle; under the profiler {s['profiled_wall_us']:.1f} us a step, idle "
                         f"{s['profiled_idle_us']:.1f} us: " + _idle_parts(s, "profiled_") + ")")
        g = s.get("graph_us")
        if isinstance(g, (int, float)) and math.isfinite(g):
            lines.append(f"as a CUDA graph: {g:.1f} us per step (replay, measured)")
        elif s.get("graph_error"):
            lines.append(f"as a CUDA graph: not captured ({s['graph_error']})")
        if s.get("graph_attribution"):
            lines.append(f"graph replay: {s['graph_attribution']}")
        if s.get("counters"):
            lines.append(f"counters ({s['counters']}): " + (s.get("counters_error") or s.get("counters_matched", "joined")))
        if len(self.kernels):
            shown = self.kernels.head(top)
            lines += ["", f"kernels (top {min(top, len(self.kernels))} of {len(self.kernels)} rows by time per step):",
                      _tables.format_table(shown, TABLE)]
            lines += _unknown_notes(shown)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from ..display import step_html
        return step_html(self)

    def __repr__(self) -> str:
        return f"<bwprof step report {self.name!r}: {len(self.kernels)} kernel rows; {self.verdict}>"

    def save(self, out_dir=None, *, plots: bool = True) -> Path:
        """The run folder ``<out_dir or results>/<stamp>-<device>-step-<name>/``: the kernel rows as
        ``bench`` writes its rows (results.csv, rows.jsonl, bandwidth_report.json), step_report.json
        (summary, units, options), step_launches.csv, step_ops.csv and the charts; returns its path."""
        from ..files import atomic_write_text
        from ..results import RunWriter

        now = _dt.datetime.now(_dt.timezone.utc)
        dev = str(self.device.get("id", "unknown")).replace(":", "").replace(os.sep, "_")
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in self.name)[:40] or "step"
        cols = list(self.kernels.columns) if len(self.kernels) else KERNEL_COLUMNS
        with RunWriter(out_dir, self.device, run_id=f"{now:%Y%m%d-%H%M%S}-{dev}-step-{safe}", columns=cols) as w:
            for row in self.kernels.to_dict("records"):
                w.add({str(k): v for k, v in row.items()})
        folder = w.path
        doc = {"format": "bwprof-step", "version": 1, "name": self.name, "summary": _plain(self.summary),
               "device": _plain(self.device), "options": _plain(self.options),
               "units": {c: unit_of(c) for c in list(cols) + list(self.summary) if unit_of(c)}}
        atomic_write_text(folder / FILES["summary"], json.dumps(doc, indent=1, default=str))
        for attr in ("launches", "ops"):
            buf = io.StringIO()
            getattr(self, attr).to_csv(buf, index=False)
            atomic_write_text(folder / FILES[attr], buf.getvalue())
        if plots:
            try:
                self.plot(folder)
            except Exception as e:  # noqa: BLE001 - the measurements are already on disk
                print(f"plots: not drawn ({type(e).__name__}: {e})")
            try:  # the interactive report beside the charts, as bench writes it
                from ..html import report as html_report
                html_report(folder)
            except Exception as e:  # noqa: BLE001 - the measurements are already on disk
                print(f"html report: not written ({type(e).__name__}: {e})")
        return folder

    def plot(self, out_dir) -> list[Path]:
        """The step's kernels on the measured roofline and its time split, PNG and SVG."""
        from ..plots.figure import NoData
        from ..plots.step_roofline import step_roofline
        from ..plots.step_time import step_time

        folder = Path(out_dir)
        out = []
        for name, draw in ((CHARTS[0], step_roofline), (CHARTS[1], step_time)):
            try:
                fig = draw(self, folder / name)
            except NoData:
                continue
            out += fig._bwprof_paths
        return out

    def to_perfetto(self, path) -> Path:
        """The first timed run as a Chrome/Perfetto trace (JSON): one event per launch, with its
        op, module and row's GB/s, % of the memory roof, GFLOP/s and bound in its args."""
        from .perfetto import write_trace

        return write_trace(self, path)


def load_step(path) -> StepReport:
    """A report saved by :meth:`StepReport.save` (its run folder)."""
    from ..results import load_run

    folder = _args.path("path", path)
    if not folder.is_dir():
        raise ValueError(f"path: {folder} is not a step run folder")
    f = folder / FILES["summary"]
    try:
        doc = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{f}: not a bwprof step report ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != "bwprof-step":
        raise ValueError(f"{f}: not a bwprof step report")
    kernels = load_run(folder)
    summary = {k: (math.nan if v is None else v) for k, v in (doc.get("summary") or {}).items()}

    def table(name):
        p = folder / FILES[name]
        try:
            return pd.read_csv(p, keep_default_na=False, na_values=[""])
        except (OSError, pd.errors.EmptyDataError):
            return pd.DataFrame()
    for c in ("region", "module", "op", "bytes_source", "flops_source", "counters_source", "bottleneck", "bytes_on"):
        if c in kernels:
            kernels[c] = kernels[c].fillna("").astype(str)
    return StepReport(str(doc.get("name", "")), doc.get("device") or {}, kernels, summary, table("ops"),
                      table("launches"), doc.get("options") or {})
