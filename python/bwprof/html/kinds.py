"""What a run is, and its page: one function per kind of run turns it into the page's data.

Kinds: ``results`` (a ``bench`` run folder, a ``bwprof.sweep`` or ``profile`` DataFrame, any
bwprof results table or Measurement), ``model`` (a :class:`bwprof.workloads.Report` or its run
folder), ``step`` (a step report of ``bwprof.profile_step`` or its run folder) and ``trace`` (a
profiler's output read by ``bwprof.traces``). :func:`page_of` takes any of them; a new kind adds a
loader in :func:`load` and one ``<kind>_page`` function here.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import _core
from .. import roofline as rl
from . import sections as sec

MODEL_JSON = "model_report.json"   # workloads/output.py writes it
STEP_JSON = "step_report.json"     # the step report's run folder (bwprof.step)
STEP_FORMAT = "bwprof-step"


@dataclass
class Run:
    """A run as read: its kind, its object (a DataFrame or a report) and what is known of how
    it was made (``meta``: device, created, bwprof_version, command, run_id, source)."""

    kind: str
    obj: Any
    meta: dict = field(default_factory=dict)
    curve: dict | None = None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# ---- reading a run ------------------------------------------------------------------------------

def _folder_meta(folder: Path) -> dict:
    """How a run folder's run was made: rows.jsonl's first line (or bandwidth_report.json)."""
    from ..results import REPORT, ROWS
    meta: dict = {}
    try:
        with open(folder / ROWS, encoding="utf-8") as f:
            first = json.loads(f.readline())
        if isinstance(first, dict):
            meta = first
    except (OSError, ValueError):
        try:
            doc = json.loads((folder / REPORT).read_text(encoding="utf-8"))
            if isinstance(doc, dict):
                meta = {k: v for k, v in doc.items() if k != "rows"}
        except (OSError, ValueError):
            pass
    return {k: meta.get(k) for k in ("device", "created", "bwprof_version", "schema_version", "command", "run_id")
            if meta.get(k) is not None}


def _json(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"run: {path} cannot be read as a bwprof report ({e})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"run: {path} is not a bwprof report (not a JSON object)")
    return doc


def _load_folder(folder: Path) -> Run:
    from ..plots import _saved_size_curve
    from ..results import CSV, REPORT, ROWS, load_run, results_table
    meta = dict(_folder_meta(folder), source=str(folder))
    curve = _saved_size_curve(folder)
    if (folder / STEP_JSON).exists():
        return Run("step", _load_step(folder), meta, curve)
    if (folder / MODEL_JSON).exists():
        doc = _json(folder / MODEL_JSON)
        rows = load_run(folder) if any((folder / f).exists() for f in (ROWS, REPORT, CSV)) else pd.DataFrame()
        return Run("model", _SavedModel(doc, rows), meta, curve)
    if any((folder / f).exists() for f in (ROWS, REPORT, CSV)):
        return Run("results", results_table(load_run(folder), f"run: {folder}"), meta, curve)
    return _load_trace(folder, meta, "a folder without a bwprof run (no rows.jsonl, bandwidth_report.json or "
                                     "results.csv)")


def _load_trace(path: Path, meta: dict, why: str) -> Run:
    """A profiler's output (rocprofv3, ncu, nsys, PyTorch, ...) as a trace run; anything else is a
    ValueError saying that it is neither a bwprof run nor a trace bwprof reads."""
    from .. import traces
    try:
        df = traces.read(path)
    except (ValueError, OSError) as e:
        raise ValueError(f"run: {path}: not a bwprof run ({why}) and not a profiler trace bwprof reads "
                         f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    return Run("trace", df, dict(meta, source=str(path), tool=_tool_of(df)))


def _tool_of(df: pd.DataFrame) -> str:
    if "source_tool" in df and len(df):
        tools = df["source_tool"].dropna().astype(str)
        return ", ".join(dict.fromkeys(tools)) if len(tools) else ""
    return ""


def _load_step(folder: Path):
    try:
        from ..step.report import load_step
    except ImportError:  # a build without the step report: its folder still reads as a results run
        load_step = None
    if load_step is not None:
        return load_step(folder)
    return _SavedStep(_json(folder / STEP_JSON), folder)


class _SavedModel:
    """A model report read back from its run folder (model_report.json and the ops' rows)."""

    def __init__(self, doc: dict, rows: pd.DataFrame):
        self.summary = doc.get("summary") or {}
        self.device = doc.get("device") or {}
        self.rows = rows
        for attr in ("ops", "steps", "categories", "amdahl", "whatif"):
            setattr(self, attr, pd.DataFrame(doc.get(attr) or []))
        self.main_step = self.summary.get("main_step", "step")


class _SavedStep:
    """A step run folder when the step package is not in this build: its summary and rows."""

    def __init__(self, doc: dict, folder: Path):
        from ..results import load_run
        self.name = str(doc.get("name", ""))
        self.device = doc.get("device") or {}
        self.summary = doc.get("summary") or {}
        self.kernels = load_run(folder)
        self.ops = pd.DataFrame()


def load(run: Any) -> Run:
    """Whatever :func:`bwprof.report` is given, as a :class:`Run` of a known kind."""
    from ..results import load_run, results_table
    from ..workloads.report import Report as ModelReport

    if isinstance(run, Run):
        return run
    if isinstance(run, ModelReport):
        return Run("model", run, {"device": run.device})
    if _is_step_report(run):
        return Run("step", run, {"device": getattr(run, "device", {})})
    if isinstance(run, _core.Measurement):
        run = [run]
    if isinstance(run, (list, tuple)) and run and all(isinstance(m, _core.Measurement) for m in run):
        return Run("results", results_table(pd.DataFrame([m.to_dict() for m in run]), "run"), {})
    if isinstance(run, pd.DataFrame):
        if "kernel_name" in run.columns and "duration_ns" in run.columns and "kernel" not in run.columns:
            return Run("trace", run, {"tool": _tool_of(run)})
        return Run("results", results_table(run, "run"), {"device": run.attrs.get("device")} if run.attrs.get("device")
                   else {})
    if isinstance(run, (str, os.PathLike)):
        p = Path(run)
        if not p.exists():
            raise FileNotFoundError(f"run: no such file or folder: {p}")
        if p.is_dir():
            return _load_folder(p)
        if p.name in (MODEL_JSON, STEP_JSON):
            return _load_folder(p.parent)
        if p.suffix in (".json", ".jsonl", ".csv"):
            try:
                df = load_run(p)
                return Run("results", results_table(df, f"run: {p}"), dict(_folder_meta(p.parent), source=str(p)),
                           None)
            except ValueError as e:
                why = str(e).splitlines()[0]
        else:
            why = f"a {p.suffix or 'file'} file is not a bwprof run"
        return _load_trace(p, {}, why)
    raise TypeError(f"run: expected a run folder or file, a results DataFrame, a trace DataFrame, a Measurement, "
                    f"a model or step report, got {type(run).__name__}")


def _is_step_report(obj) -> bool:
    try:
        from ..step.report import StepReport
    except ImportError:
        return isinstance(obj, _SavedStep)
    return isinstance(obj, (StepReport, _SavedStep))


# ---- the pages ----------------------------------------------------------------------------------

def _device_of(meta: dict, rows: pd.DataFrame | None) -> dict:
    dev = dict(meta.get("device") or {})
    if rows is not None and len(rows):
        for col, key in (("device", "id"), ("device_name", "name"), ("backend", "backend")):
            if key not in dev and col in rows:
                vals = rows[col].dropna().astype(str)
                vals = vals[vals != ""]
                if len(vals):
                    dev[key] = vals.mode().iloc[0]
    return {str(k): v for k, v in dev.items() if isinstance(v, (str, int, float, bool)) and v not in ("", None)
            and not (isinstance(v, float) and not math.isfinite(v))}


def _clocks(rows: pd.DataFrame | None, dev: dict) -> str:
    """The clocks the run saw: the SM clock each row recorded (median, range), the device's."""
    said = []
    if rows is not None and "sm_clock_mhz" in rows:
        c = pd.to_numeric(rows["sm_clock_mhz"], errors="coerce")
        c = c[c > 0]
        if len(c):
            said.append(f"SM clock while timed {c.median():.0f} MHz (median of {len(c)} rows; "
                        f"{c.min():.0f}-{c.max():.0f})")
        thr = pd.to_numeric(rows.get("throttled_samples"), errors="coerce") if "throttled_samples" in rows else None
        if thr is not None and (thr > 0).any():
            said.append(f"{int((thr > 0).sum())} rows saw throttled samples")
    for key, name in (("clock_mhz", "device clock"), ("memory_clock_mhz", "memory clock")):
        v = dev.get(key)
        if isinstance(v, (int, float)) and v > 0:
            said.append(f"{name} {v:.0f} MHz")
    if said:
        return "; ".join(said)
    cpu = str(dev.get("kind") or dev.get("backend") or "") == "cpu" or str(dev.get("id", "")) == "cpu"
    return "not recorded (the CPU backend reads no clock)" if cpu else "not recorded"


def _base(kind: str, title: str, meta: dict, rows: pd.DataFrame | None) -> dict:
    dev = _device_of(meta, rows)
    return {"kind": kind, "title": title, "verdict": "", "notes": [], "tables": [], "breakdowns": [],
            "meta": {"device": dev, "run_created": meta.get("created") or "", "report_created": _now(),
                     "bwprof_version": meta.get("bwprof_version") or "", "report_bwprof_version": _core.__version__,
                     "command": meta.get("command") or "", "source": meta.get("source") or "",
                     "run_id": meta.get("run_id") or "", "tool": meta.get("tool") or "",
                     "schema_version": meta.get("schema_version") or "", "clocks": _clocks(rows, dev)},
            "rows": None, "roofline": None, "size": None, "dtypes": None, "busy": None}


def _charts_of_rows(page: dict, rows: pd.DataFrame, curve: dict | None) -> None:
    """The roofline, size ceiling and dtype comparison of a results table, into ``page``."""
    kernels = rl.split_sweep(rows)[0]
    page["rows"] = sec.rows_payload(kernels)
    page["roofline"] = sec.roofline_payload(rows)
    page["size"] = sec.size_payload(kernels, curve)
    page["dtypes"] = sec.dtype_payload(kernels)
    off = kernels[~((pd.to_numeric(kernels.get("flops"), errors="coerce") > 0)
                    & (pd.to_numeric(kernels.get("gflops"), errors="coerce") > 0)
                    & (pd.to_numeric(kernels.get("intensity_flop_per_byte"), errors="coerce") > 0))] \
        if len(kernels) else kernels
    page["roofline"]["off_chart"] = len(off)
    if len(off):
        names = off["kernel"].astype(str).value_counts(sort=False)
        page["roofline"]["off_note"] = ("Not on the roofline (no FLOPs or no time, judged by bandwidth alone; they "
                                        "are on the size chart): " +
                                        ", ".join(f"{k} \u00d7{v}" if v > 1 else k for k, v in names.items()))


RESULTS_TABLE = ["kernel", "variant", "dtype", "label", "shape", "time_median_us", "bandwidth_gbs",
                 "bandwidth_pct_peak", "bandwidth_pct_attainable", "gflops", "compute_pct_peak",
                 "roofline_efficiency_pct", "bound", "grade", "verified", "bottleneck"]


def results_page(run: Run) -> dict:
    """A bench run, a sweep, a profile: every row on the roofline and the size chart, the dtypes
    side by side, the time per family, the rows as a table."""
    df = run.obj
    if not len(df):
        raise ValueError(f"run: {run.meta.get('source') or 'the table'} holds no result rows; nothing to report")
    kernels = rl.split_sweep(df)[0]
    schema = set(_core.columns()) | {"label"}
    # a sweep's grid, a model's op names: the columns a table has beyond the schema lead the table
    extra = [c for c in df.columns if c not in schema]
    what = "run" if run.meta.get("run_id") else "sweep" if extra else "results"
    page = _base("results", f"bwprof {what} on {sec._t(df, 'device_name').mode().iloc[0] if 'device_name' in df else '?'}",
                 run.meta, df)
    _charts_of_rows(page, df, run.curve)
    fam = sec._t(kernels, "family").where(sec._t(kernels, "family") != "", sec._t(kernels, "kernel"))
    b = sec.breakdown_payload(fam, sec._n(kernels, "time_median_us"), "median kernel time per family "
                              "(one run of each configuration)")
    if b:
        page["breakdowns"].append(b)
    page["tables"].append(sec.table_payload(kernels, "Rows", extra + RESULTS_TABLE))
    errors = df.attrs.get("errors") or []
    if errors:
        page["notes"].append(f"{len(errors)} configuration(s) failed: " +
                             "; ".join(f"{e.get('kernel')} {e.get('dtype')}: {e.get('error')}" for e in errors[:10]))
    bad = ~rl._as_bool(kernels["verified"]) if "verified" in kernels else pd.Series(False, index=kernels.index)
    if bad.any() and kernels.get("backend") is not None:
        page["notes"].append(f"{int(bad.sum())} row(s) not verified against the reference (or user code with no "
                             f"reference): see the table's verified column")
    return page


MODEL_OPS = ["step", "op", "category", "kernel", "variant", "dtype", "shape", "count", "time_us", "total_us",
             "share_pct", "step_share_pct", "bandwidth_gbs", "bandwidth_pct_peak", "gflops", "compute_pct_peak",
             "bound", "timing", "verified"]
MODEL_STEPS = ["step", "fusions", "ops", "launches", "time_us", "parts_us", "gap_us", "gap_pct",
               "gap_per_launch_us", "items_per_s", "bound_us", "pct_of_bound", "mode", "verified"]
MODEL_WHATIF = ["fusion", "what", "ops_before_us", "ops_after_us", "ops_speedup_pct", "step_before_us",
                "step_after_us", "overall_speedup_pct", "parts_estimate_pct", "seeds_estimate",
                "measured_vs_seeds_pct"]


def model_page(run: Run) -> dict:
    """A workload's report: its ops on the roofline, where its step's time goes, the step whole
    against its parts (busy and the gap), the steps' gaps and each fusion's what-if."""
    r = run.obj
    s = dict(r.summary or {})
    rows = r.rows if isinstance(r.rows, pd.DataFrame) else pd.DataFrame()
    meta = dict(run.meta, device=run.meta.get("device") or r.device)
    page = _base("model", f"{s.get('title') or s.get('workload') or 'model'} on {s.get('device_name') or '?'}",
                 meta, rows if len(rows) else None)
    if len(rows):
        from ..results import results_table
        _charts_of_rows(page, results_table(rows, "the model's rows"), run.curve)
    main = s.get("main_step") or getattr(r, "main_step", "step")
    step_us, parts_us = _f(s.get("step_us")), _f(s.get("parts_us"))
    page["verdict"] = _model_verdict(s)
    if step_us == step_us and parts_us == parts_us:
        gap = step_us - parts_us
        page["busy"] = sec.busy_payload([("ops (the parts, each timed on its own)", min(parts_us, step_us)),
                                         ("gap (between and across launches)", gap)], step_us,
                                        f"step '{main}' whole: {step_us:.1f} us; the parts sum to {parts_us:.1f} us"
                                        + (" (more than the whole: the step overlaps its ops)" if gap < 0 else ""))
    cats = r.categories
    if isinstance(cats, pd.DataFrame) and len(cats):
        c = cats[cats["step"].astype(str) == str(main)] if "step" in cats else cats
        b = sec.breakdown_payload(c["category"], c["total_time_us"], f"time per category of step '{main}' "
                                  "(each op timed on its own, times its count)")
        if b:
            page["breakdowns"].append(b)
    for attr, title, cols in (("ops", "Ops (every step)", MODEL_OPS), ("steps", "Steps: whole against the sum of "
                              "their parts (the gap)", MODEL_STEPS), ("whatif", "What each fusion buys (measured)",
                                                                     MODEL_WHATIF), ("amdahl", "Amdahl", None)):
        t = getattr(r, attr, None)
        if isinstance(t, pd.DataFrame) and len(t):
            page["tables"].append(sec.table_payload(t, title, cols))
    if s.get("parts_timing"):
        page["notes"].append(f"How the parts were timed: {s['parts_timing']}")
    if not s.get("verified", True):
        page["notes"].append("WARNING: an op's output did not match its reference")
    return page


def _f(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def _model_verdict(s: dict) -> str:
    step, parts, gap = _f(s.get("step_us")), _f(s.get("parts_us")), _f(s.get("gap_pct"))
    if step != step:
        return ""
    text = f"step '{s.get('main_step', 'step')}': {step:.1f} us whole; parts {parts:.1f} us; gap {gap:+.1f} %"
    pct = _f(s.get("pct_of_bound"))
    if pct == pct:
        text += f"; the step runs at {pct:.0f} % of its bound ({_f(s.get('bound_us')):.1f} us)"
    return text


STEP_KERNELS = ["kernel", "op", "module", "region", "category", "dtype", "shape", "calls_per_step", "time_median_us",
                "time_per_step_us", "step_share_pct", "bandwidth_gbs", "bandwidth_pct_peak", "gflops",
                "compute_pct_peak", "bound", "bytes_source", "dram_ratio", "bottleneck"]
STEP_IDLE = (("idle_before_first_us", "idle before the first launch"), ("idle_launch_gaps_us", "idle between launches"),
             ("idle_host_wait_us", "idle after host waits"), ("idle_after_last_us", "idle after the last launch"))


def step_page(run: Run) -> dict:
    """A step report (bwprof.profile_step): its kernels on the roofline (intensity against DRAM or
    L2 bytes where counters were joined), the wall time split into busy and each kind of idle,
    the time per category and the kernels table, with the report's verdict."""
    r = run.obj
    s = dict(r.summary or {})
    k = r.kernels if isinstance(r.kernels, pd.DataFrame) else pd.DataFrame()
    meta = dict(run.meta, device=run.meta.get("device") or getattr(r, "device", {}))
    page = _base("step", f"step {getattr(r, 'name', '')!r} on {s.get('device_name') or '?'}", meta,
                 k if len(k) else None)
    page["verdict"] = str(s.get("verdict_text") or "")
    rows = k.copy()
    if len(rows):
        if "family" not in rows:
            rows["family"] = sec._t(rows, "category").where(sec._t(rows, "category") != "", sec._t(rows, "op"))
        if "label" not in rows:
            rows["label"] = sec._t(rows, "op")
        if "verified" not in rows:
            rows["verified"] = True
        from ..results import results_table
        _charts_of_rows(page, results_table(rows, "the step's kernels"), run.curve)
        b = sec.breakdown_payload(sec._t(rows, "category").where(sec._t(rows, "category") != "", "other"),
                                  sec._n(rows, "time_per_step_us"), "kernel time per step by category")
        if b:
            page["breakdowns"].append(b)
        page["tables"].append(sec.table_payload(k, "Kernels (one row per kernel and op)", STEP_KERNELS))
    wall = _f(s.get("wall_us"))
    page["busy"] = sec.busy_payload([("busy (a kernel running)", _f(s.get("busy_us")))]
                                    + [(name, _f(s.get(key))) for key, name in STEP_IDLE], wall,
                                    f"wall {wall:.1f} us per step" if wall == wall else "")
    ops = getattr(r, "ops", None)
    if isinstance(ops, pd.DataFrame) and len(ops):
        page["tables"].append(sec.table_payload(ops, "Ops the dispatcher saw"))
    whatif = getattr(r, "whatif", None)
    if isinstance(whatif, pd.DataFrame) and len(whatif):
        page["tables"].append(sec.table_payload(whatif, "What-ifs"))
    return page


TRACE_KERNELS = ["short_name", "category", "total_time_ns", "calls", "avg_time_ns", "pct_gpu_time"]


def trace_page(run: Run) -> dict:
    """A profiler trace: GPU time per category and per kernel (the trace analysis's breakdown),
    and busy against idle over the trace's span where it has timestamps. A trace holds times,
    not bytes: no roofline (join it with a bwprof run, traces.join_counters, for one)."""
    from .. import traces
    df = run.obj
    if not len(df):
        raise ValueError(f"run: {run.meta.get('source') or 'the trace'} holds no kernels; nothing to report")
    meta = dict(run.meta)
    if not meta.get("device") and "device" in df:  # the devices the trace names
        names = [str(d) for d in dict.fromkeys(df["device"].dropna()) if str(d)]
        if names:
            meta["device"] = {"name": ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
                              + " (the trace's device column)"}
    page = _base("trace", f"trace{' from ' + run.meta['tool'] if run.meta.get('tool') else ''}", meta, None)
    by_cat = traces.breakdown(df, by="category")
    b = sec.breakdown_payload(by_cat["category"], by_cat["total_time_ns"] / 1e3, "GPU time per category "
                              "(kernels on several streams each count in full)")
    if b:
        page["breakdowns"].append(b)
    by_k = traces.breakdown(df, by="kernel")
    page["tables"].append(sec.table_payload(by_cat, "GPU time per category"))
    page["tables"].append(sec.table_payload(by_k, "GPU time per kernel", TRACE_KERNELS))
    page["tables"].append(sec.table_payload(traces.amdahl(df), "Amdahl: the whole if a category were faster"))
    busy, span = _busy_span(df)
    if span == span and span > 0:
        page["busy"] = sec.busy_payload([("busy (a kernel running)", busy), ("idle", span - busy)], span,
                                        f"from the first kernel's start to the last one's end: {span / 1e3:.3f} ms")
    page["notes"].append("A trace holds kernel times, not bytes: it has no roofline. traces.join_counters puts "
                         "its counters beside a bwprof run of the same kernels.")
    return page


def _busy_span(df: pd.DataFrame) -> tuple[float, float]:
    """Microseconds in which at least one kernel ran (the union of their intervals) and the span
    from the first start to the last end; NaN without timestamps."""
    if "start_ns" not in df or "end_ns" not in df:
        return math.nan, math.nan
    s = pd.to_numeric(df["start_ns"], errors="coerce")
    e = pd.to_numeric(df["end_ns"], errors="coerce")
    ok = s.notna() & e.notna() & (e >= s)
    if not ok.any():
        return math.nan, math.nan
    iv = np.array(sorted(zip(s[ok].astype("int64"), e[ok].astype("int64"))), dtype=np.int64)
    busy, cur_s, cur_e = 0, iv[0, 0], iv[0, 1]
    for a, b in iv[1:]:
        if a > cur_e:
            busy += cur_e - cur_s
            cur_s, cur_e = a, b
        elif b > cur_e:
            cur_e = b
    busy += cur_e - cur_s
    return busy / 1e3, float(iv[:, 1].max() - iv[:, 0].min()) / 1e3


PAGES = {"results": results_page, "model": model_page, "step": step_page, "trace": trace_page}


def page_of(run: Any, command: str | None = None) -> dict:
    """The page's data for any run :func:`load` reads; ``command`` overrides the recorded one."""
    r = load(run)
    if command:
        r.meta["command"] = command
    return PAGES[r.kind](r)
