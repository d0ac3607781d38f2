"""Running a workload: every step's memory checked first, every distinct op timed on its own the way
the step runs it (by default the runner's steady state: launches back to back in one graph, over
rotated input sets, the time per launch; `bwprof.measure` for kernels, `bwprof.profile` and one
graph of the callable's calls for the user's ops), then every step timed whole (one graph on a
GPU), and the report assembled (report.py)."""
from __future__ import annotations

import math
import sys
from typing import Any

import pandas as pd

from .. import _core
from .. import arguments as _args
from ..api import TIMINGS, measure
from ..roofline import classify
from ..streams import current_handle
from ..usercode import add_note, profile
from .ops import Workload
from .report import Report, build_report

SETS = {"auto": 0, "every": -1}
OP_TIMINGS = ("auto",) + TIMINGS
# Calls of a user op per timed graph (the runner's kMinGraphLaunches: its steady state's minimum).
USER_GRAPH_CALLS = 20


def _sets(value: Any) -> int:
    if isinstance(value, str):
        if value not in SETS:
            raise ValueError(f"sets: expected 'auto', 'every' or a count >= 1, got {value!r}")
        return SETS[value]
    return _args.count("sets", value, 1, 1 << 20)


def _text_params(params: dict) -> dict:
    return {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in params.items()}


def _key(op, dtype: str) -> tuple:
    """Ops that run the same invocation share one measurement (Q, K and V of equal shapes)."""
    if op.is_user:
        return ("user", op.name)
    return (op.kernel, op.variant or "", dtype, tuple(sorted(_text_params(op.params).items())))


def _noted(fn, text: str):
    """``fn`` whose exception goes on as itself with ``text`` as a note (PEP 678): the core calls it
    in the step's timing, where no bwprof.profile adds one."""
    def call():
        try:
            return fn()
        except Exception as e:  # the user's own: its type kept, bwprof's context added
            add_note(e, text)
            raise
    return call


def _core_ops(ops: list, w: Workload, step: str = "") -> list[dict]:
    out = []
    for op in ops:
        if op.is_user:
            where = f"in the step {step!r}, timed whole" if step else "timed on its own"
            fn = _noted(op.fn, f"bwprof.model: raised by op {op.name!r} of workload {w.name!r} ({where}); "
                               f"the device is usable")
            out.append({"name": op.name, "fn": fn, "count": op.count,
                        "bytes": float(op.bytes_read) + float(op.bytes_written)})
        else:
            out.append({"name": op.name, "kernel": op.kernel, "variant": op.variant or "",
                        "dtype": op.dtype or w.dtype, "params": _text_params(op.params), "count": op.count})
    return out


def op_timing_for(op_timing: str, graph: bool) -> str:
    """The per-op timing "auto" stands for: the steady state ("graph") when the step is timed as one
    sequence of launches (a graph on a GPU, the calls back to back on a CPU), else "single"."""
    op_timing = _args.text("op_timing", op_timing, OP_TIMINGS)
    if op_timing == "auto":
        return "graph" if graph else "single"
    return op_timing


def _steady_user_row(row: dict, op, dev: dict, stream, warmup: int, repeats: int, min_time_s: float,
                     max_time_s: float) -> dict:
    """A user op's row with the steady state's time: its callable called USER_GRAPH_CALLS times
    back to back (one graph on a GPU where its work can be captured, as the step captures it; on
    the stream otherwise), the time per call; the rates and the judgement follow the new time.
    The callable reads the same data each call (it has one set): the row says cache "hot"."""
    fn = _noted(op.fn, f"bwprof.model: raised by op {op.name!r} (its steady state, timed on its own); "
                       f"the device is usable")
    core_op = {"name": op.name, "fn": fn, "count": USER_GRAPH_CALLS,
               "bytes": float(op.bytes_read) + float(op.bytes_written)}
    t = _core.time_step(dev["id"], [core_op], 1, warmup, repeats, min_time_s, max(repeats, 1000), max_time_s,
                        False, True, stream)
    stats = t["time_us"]
    per = float(stats["median"]) / USER_GRAPH_CALLS
    old = float(row.get("time_median_us") or 0)
    out = dict(row)
    for k, key in (("median", "time_median_us"), ("min", "time_min_us"), ("max", "time_max_us"),
                   ("mean", "time_mean_us"), ("stddev", "time_std_us")):
        out[key] = float(stats[k]) / USER_GRAPH_CALLS
    out["time_cv"] = float(stats["cv"])
    out["repeats"] = int(stats["count"])
    out["timing"] = "graph" if t["mode"] in ("graph", "cpu") else "stream"
    out["graph_launches"] = USER_GRAPH_CALLS
    out["rotation_sets"] = 1
    out["cache"] = "hot"
    scale = old / per if old > 0 and per > 0 else math.nan
    for key in ("bandwidth_gbs", "bandwidth_pct_peak", "bandwidth_pct_theoretical", "gflops", "compute_pct_peak"):
        v = row.get(key)
        if isinstance(v, (int, float)) and math.isfinite(v):
            out[key] = v * scale
    j = classify(pd.DataFrame([out])).iloc[0]
    for key in ("attainable_gflops", "roofline_efficiency_pct", "bound", "above_peak", "attainable_bandwidth_gbs",
                "bandwidth_pct_attainable", "fixed_cost_pct"):
        out[key] = j[key].item() if hasattr(j[key], "item") else j[key]
    out["bottleneck"] = j["roofline_note"]
    eff = out["roofline_efficiency_pct"]
    out["grade"] = "" if out["above_peak"] or not math.isfinite(eff) else _core.grade(eff)
    return out


def run_workload(w: Workload, *, device: str = "auto", op_timing: str = "auto", cache: str = "cold",
                 warmup: int = 2, repeats: int = 10, min_time_s: float = 0.05, max_time_s: float = 2.0,
                 sets: Any = "auto", verify: bool = True, graph: bool = True, progress: bool = False) -> Report:
    """Times ``w``: each distinct op on its own (``op_timing`` "graph": the steady state, launches
    back to back in one graph over rotated input sets, the time per launch, as the step runs them;
    "single": one launch after the cache flush, bwprof's standard row, which pays the launch and
    timing floor a graph does not; "auto": "graph" when the step is timed as one graph, else
    "single"), each step whole; returns a :class:`Report`."""
    if not isinstance(w, Workload):
        raise TypeError(f"workload: expected a Workload (bwprof.workload(...)), got {type(w).__name__}")
    device = _args.text("device", device)
    graph = _args.flag("graph", graph)
    op_timing = op_timing_for(op_timing, graph)
    cache = _args.text("cache", cache, ("cold", "hot"))
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, _args.MAX_REPEATS)
    min_time_s = _args.seconds("min_time_s", min_time_s)
    max_time_s = _args.seconds("max_time_s", max_time_s)
    nsets = _sets(sets)
    verify = _args.flag("verify", verify)
    dev = _core.device_info(device)
    gpu = dev["kind"] != "cpu"
    say = (lambda text: sys.stderr.write(f"bwprof model: {text}\n")) if progress else (lambda text: None)

    steps = w.steps()
    # Every step's instances against the memory there is, before anything is made or timed.
    plans = {name: _core.plan_step(dev["id"], _core_ops(ops, w, name), nsets) for name, _, ops in steps}
    stream = None
    if gpu and any(op.is_user for op in w.ops):
        stream = current_handle(int(dev["id"].split(":")[1]))[0]

    measured: dict = {}
    distinct = [op for op in w.ops]
    for i, op in enumerate(distinct):
        key = _key(op, op.dtype or w.dtype)
        if key in measured:
            continue
        say(f"op {i + 1}/{len(distinct)}: {op.name}")
        if op.is_user:
            try:
                m = profile(op.fn, name=op.name, bytes_read=op.bytes_read, bytes_written=op.bytes_written,
                            flops=op.flops, dtype=op.dtype or w.dtype, device=dev["id"], cache=cache,
                            warmup=warmup, repeats=repeats, min_time_s=min_time_s, max_time_s=max_time_s,
                            stream=stream, kwargs={}).to_dict()
            except Exception as e:  # the user's own exception (or bwprof's refusal) names the op
                add_note(e, f"bwprof.model: op {op.name!r} of workload {w.name!r}, timed on its own")
                raise
            if op_timing == "graph":
                m = _steady_user_row(m, op, dev, stream, warmup, repeats, min_time_s, max_time_s)
        else:
            m = _measure_op(op, w, dev, op_timing, cache=cache, warmup=warmup, repeats=repeats,
                            min_time_s=min_time_s, max_time_s=max_time_s, verify=verify)
        measured[key] = m

    timed = {}
    for name, applied, ops in steps:
        say(f"step '{name}': {plans[name]['launches']} launches")
        timed[name] = _core.time_step(dev["id"], _core_ops(ops, w, name), nsets, warmup, repeats, min_time_s,
                                      max(repeats, 1000), max_time_s, verify, graph, stream)

    peaks = _core.peaks(dev["id"], w.dtype)
    by_op = {op.name: measured[_key(op, op.dtype or w.dtype)] for op in w.ops}
    options = {"op_timing": op_timing, "op_timings": sorted({str(m.get("timing")) for m in measured.values()}),
               "cache": cache, "sets": sets, "repeats": repeats, "graph": graph}
    return build_report(w, dev, steps, by_op, timed, peaks, options)


def _measure_op(op, w: Workload, dev: dict, op_timing: str, **kw) -> dict:
    """A kernel op's row, timed as asked; work that a graph cannot hold falls back to one launch
    (its row's timing says "single")."""
    def run(timing: str) -> dict:
        return measure(op.kernel, dtype=op.dtype or w.dtype, device=dev["id"], variant=op.variant, timing=timing,
                       **kw, **op.params).to_dict()
    try:
        return run(op_timing)
    except ValueError as e:
        if op_timing == "graph" and "cannot be timed as a graph" in str(e):
            return run("single")
        raise ValueError(f"op '{op.name}': {e}") from None
