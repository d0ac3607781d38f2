"""``profile_step``: a callable's step, kernel by kernel and whole.

On a GPU (PyTorch): warm-up calls, plain timed calls (the wall time), one call under the op
counter (bytes and FLOPs of every op: the inference run, never timed), the timed calls under
PyTorch's profiler (Kineto: CUPTI on NVIDIA, the ROCm tracer on AMD), and the step captured in a
CUDA/HIP graph and replayed (graph.py). On the CPU: the step's ``bwprof.region`` calls timed on the
host clock. Either way the same report (report.py).
"""
from __future__ import annotations

import functools
import math
import sys
import time
from typing import Any, Callable

import numpy as np
import pandas as pd

from .. import _core
from .. import arguments as _args
from .attribute import launches as _launches, traffic_of
from .idle import IDLE_CAUSES, host_waits, split, verdict
from .judge import judge_rows, peaks_for
from .regions import Recorder
from .report import StepReport
from .rows import region_launches, region_row, kernel_rows
from .timeline import STEP_RANGE, SYNC_RANGE, from_kineto

GRAPH_CHOICES = ("auto", "off", "on")


def _name_of(fn: Any) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "lambda" if name == "<lambda>" else str(name)


def _note(err: BaseException, text: str) -> None:
    """The user's own exception goes on unchanged, with bwprof's context as a PEP 678 note."""
    if hasattr(err, "add_note"):
        err.add_note(text)


def _torch_cuda():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F811 - the GPU path needs it; the CPU path never imports it
        except ImportError:
            return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - a broken CUDA install: no GPU path
        return None


def _device(device: str) -> tuple[str, Any]:
    """("cpu" or "gpu:N", torch or None)."""
    device = _args.text("device", device)
    if device == "cpu":
        return "cpu", None
    torch = _torch_cuda()
    if device == "auto":
        return ("gpu:0", torch) if torch is not None else ("cpu", None)
    info = _core.device_info(device)  # an unknown device fails here
    if info["kind"] == "cpu":
        return "cpu", None
    if torch is None:
        raise ValueError(f"device: {device!r} needs PyTorch with a GPU (its profiler traces the step's kernels); "
                         f"use device='cpu' for a step of bwprof.region calls")
    return info["id"], torch


def profile_step(fn: Callable, *args: Any, name: str | None = None, warmup: int = 2, repeats: int = 5,
                 counters: Any = None, graph: str = "auto", device: str = "auto", kwargs: Any = None,
                 **call_kwargs: Any) -> StepReport:
    """Profile one step of ``fn(*args, **kwargs)`` (a decode step, a training step, anything that
    can be called again) and return its :class:`StepReport`: ``kernels`` (one row per kernel and
    the op that launched it, judged on the measured roofline) and ``summary`` (wall, busy and idle
    time and why, the step's verdict).

    ``warmup`` calls first, then ``repeats`` timed calls (medians over them). ``graph``: "auto"
    also captures the step in a CUDA/HIP graph and times its replay (the summary says what the
    graph takes, or why it could not be captured); "on" profiles the graph replay as the step
    (kernels attributed to the ops captured); "off" neither. ``counters``: "dram" (or a list of
    metrics) adds measured DRAM bytes per kernel (counters.py). ``device``: "auto" (a GPU where
    PyTorch sees one, else the CPU), "cpu", "gpu:N". Keywords other than these go to ``fn``;
    ``kwargs={...}`` passes ``fn`` its own keywords whatever their names (``name``, ``device`` ...).
    The user's exception propagates unchanged (with bwprof's context as a note); bad arguments are
    ValueErrors naming them."""
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {_args.show(fn)} ({type(fn).__name__})")
    name = _args.text("name", name) if name is not None else _name_of(fn)
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, 1000)
    if kwargs is not None and (not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs)):
        raise TypeError(f"kwargs: expected a dict of the step's keyword arguments, got {_args.show(kwargs)}")
    if kwargs and set(kwargs) & set(call_kwargs):
        raise ValueError(f"kwargs: {', '.join(map(repr, sorted(set(kwargs) & set(call_kwargs))))} given both in "
                         f"kwargs= and as a keyword of profile_step; give each once")
    kwargs = {**call_kwargs, **(kwargs or {})}
    graph = _args.text("graph", graph, GRAPH_CHOICES)
    from .counters import metric_list
    metrics = metric_list(counters)
    dev_id, torch = _device(device)
    dev = _core.device_info(dev_id)

    def call():
        try:
            return fn(*args, **kwargs)
        except BaseException as e:
            _note(e, f"bwprof.profile_step: raised by the step {name!r} while bwprof profiled it "
                     f"(the device is usable)")
            raise

    options = {"warmup": warmup, "repeats": repeats, "graph": graph, "counters": metrics or None}
    if torch is None:
        if metrics:
            raise ValueError("counters: hardware counters are read on a GPU (ncu, rocprofv3); the CPU step "
                             "has none")
        return _cpu_report(call, name, dev, warmup, repeats, options)
    from .gpu import run_gpu
    return run_gpu(call, name, dev, torch, warmup, repeats, graph, metrics, options)


def _median(values) -> float:
    v = [x for x in values if isinstance(x, (int, float)) and math.isfinite(x)]
    return float(np.median(v)) if v else math.nan


def summarize(splits: list[dict], counts: dict, wall_us: float) -> dict:
    """The step's summary. The busy/idle split is measured in the profiled runs (the run of
    median wall time, so that its parts add up to it); the wall time given is the plain runs'
    median (NaN: the profiled runs' own). The profiler slows the host, so the profiled run idles
    longer than the plain one: its idle parts are kept as ``profiled_idle_*`` (adding up to
    ``profiled_wall_us`` with the busy time), and ``idle_*`` are those parts scaled by one factor
    to the plain runs' idle time (``idle_us`` = wall - busy), so that they add up to it."""
    mid = sorted(splits, key=lambda x: x["wall_us"])[(len(splits) - 1) // 2]
    s = {k: float(mid[k]) for k in ("wall_us", "busy_us")}
    s["profiled_wall_us"] = s.pop("wall_us")
    s["wall_us"] = wall_us if math.isfinite(wall_us) else s["profiled_wall_us"]
    busy = s["busy_us"]
    profiled_idle = s["profiled_wall_us"] - busy
    s["profiled_idle_us"] = profiled_idle
    # Where the plain step is shorter than the profiled kernels' union (a device-bound step whose
    # kernels ran slower under the profiler), it has no idle time: busy is then the whole step.
    s["idle_us"] = max(s["wall_us"] - busy, 0.0)
    s["busy_pct"] = min(100.0, 100.0 * busy / s["wall_us"]) if s["wall_us"] > 0 else math.nan
    s["idle_scale"] = s["idle_us"] / profiled_idle if profiled_idle > 0 else 0.0
    for c in IDLE_CAUSES:
        s["profiled_" + c] = float(mid[c])
        s[c] = float(mid[c]) * s["idle_scale"]
    s["profiler_overhead_us"] = s["profiled_wall_us"] - s["wall_us"]
    s.update(counts)
    s["kernels_per_ms"] = s["launches"] / (s["wall_us"] / 1e3) if s["wall_us"] > 0 else math.nan
    return s


def finish(name: str, dev: dict, launch_rows: pd.DataFrame, summary: dict, records, options: dict,
           repeats: int) -> StepReport:
    """Rows, their judgement and the verdict: the report."""
    rows = kernel_rows(launch_rows, repeats, summary["wall_us"], summary["busy_us"])
    if len(rows):
        rows = judge_rows(rows, dev, peaks_for(dev["id"], rows["dtype"]))
    kind = "cpu" if dev["kind"] == "cpu" else "gpu"
    summary["verdict"], summary["verdict_text"] = verdict(summary, rows, device_kind=kind)
    summary.update({"name": name, "device": dev["id"], "device_name": dev.get("name", ""), "repeats": repeats})
    ops = pd.DataFrame([r.__dict__ for r in records]) if records else pd.DataFrame()
    return StepReport(name, dev, rows, summary, ops, launch_rows, options)


def _cpu_report(call, name: str, dev: dict, warmup: int, repeats: int, options: dict) -> StepReport:
    for _ in range(warmup):
        with Recorder() as rec:
            call()
        rec.check_closed()
    rows, splits, calls = [], [], []
    for rep in range(repeats):
        with Recorder() as rec:
            t0 = time.perf_counter_ns()
            call()
            t1 = time.perf_counter_ns()
        rec.check_closed()
        for c in rec.calls:
            rows.append(region_row(rep, c.name, c, (c.end_ns - c.start_ns) / 1e3, c.start_ns, c.end_ns))
        splits.append(split(t0, t1, [(c.start_ns, c.end_ns) for c in rec.calls]))
        calls.append(len(rec.calls))
    if not rows:
        raise ValueError("fn: the step ran no bwprof.region; on the CPU a step's rows are its regions "
                         "(with bwprof.region('name', bytes_read=, bytes_written=, flops=): ...)")
    launch_rows = pd.DataFrame(rows)
    summary = summarize(splits, {"launches": _median(calls), "kernels": 0.0, "copies": 0.0, "memsets": 0.0,
                                 "host_waits": 0.0}, math.nan)
    summary.update({"graph_us": math.nan, "graph_error": "", "mode": "cpu"})
    return finish(name, dev, launch_rows, summary, [], options, repeats)


def profiled_runs(torch, call, repeats: int, metrics=None):
    """The timed runs under PyTorch's profiler: (timeline, the region calls of each run)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    kw = {}
    if metrics:
        from .counters import experimental_config
        kw["experimental_config"] = experimental_config(torch, metrics)
    region_calls = {}
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **kw) as prof:
        for rep in range(repeats):
            with Recorder(gpu=True) as rec, record_function(f"{STEP_RANGE}{rep}"):
                call()
                with record_function(SYNC_RANGE):
                    torch.cuda.synchronize()
            rec.check_closed()
            for c in rec.calls:
                region_calls[(rep, c.name, c.call)] = c
    return from_kineto(prof.profiler.kineto_results.events()), region_calls, prof


def gpu_report(name, dev, t, region_calls, records, wall_us, options, repeats, extra=None) -> StepReport:
    """The report of profiled GPU runs (timeline ``t``) against the inference run's ``records``."""
    raw = _launches(t, records)
    if not len(raw):
        raise ValueError("fn: the step launched no GPU work (no kernel, copy or memset in "
                         f"{repeats} runs); a step of host code is profiled with device='cpu' "
                         "and bwprof.region blocks")
    with_traffic = traffic_of(raw, records)
    launch_rows = region_launches(with_traffic, region_calls)
    splits, waits_n = [], []
    for rep, step in enumerate(t.steps()):
        mine = raw[raw["repeat"] == rep]
        w = host_waits(t, step)
        splits.append(split(step.start_ns, step.end_ns, list(zip(mine["start_ns"], mine["end_ns"])), w,
                            list(mine["launch_ns"])))
        waits_n.append(len(w))
    per = raw.groupby(["repeat", "kind"]).size().unstack(fill_value=0).reindex(range(repeats), fill_value=0)
    counts = {k: _median(per[col] if col in per else [0]) for k, col in
              (("kernels", "kernel"), ("copies", "memcpy"), ("memsets", "memset"))}
    counts["launches"] = counts["kernels"] + counts["copies"] + counts["memsets"]
    counts["host_waits"] = _median(waits_n)
    counts["kernel_sum_us"] = _median(raw.groupby("repeat")["duration_us"].sum())
    counts["unattributed_launches"] = _median((raw[raw["record"] < 0]).groupby("repeat").size()
                                              .reindex(range(repeats), fill_value=0))
    summary = summarize(splits, counts, wall_us)
    summary.update(extra or {})
    return finish(name, dev, launch_rows, summary, records, options, repeats)
