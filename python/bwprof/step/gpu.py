"""The GPU side of ``profile_step`` (PyTorch): warm-up, plain timed calls, the inference run, the
profiled runs, and the step captured in a CUDA/HIP graph (its replay timed, or profiled as the
step with its kernels given to the ops that were captured: graphs.py)."""
from __future__ import annotations

import math
import time

import numpy as np

from ..framework.torch_ops import OpCounter
from .attribute import launches as _launches
from .graphs import CAPTURE_RANGE, attribute_replay, capture_ops, eager_kernels
from .regions import Recorder
from .run import gpu_report, profiled_runs
from .timeline import STEP_RANGE, SYNC_RANGE, from_kineto


def _timed(torch, fn, repeats: int) -> list[float]:
    """Wall time (us) of each call: the device idle before it, and finished after it."""
    out = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter_ns() - t0) / 1e3)
    return out


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def _capture(torch, call, profiled: bool = False):
    """The step captured in a CUDA/HIP graph (warmed up on a side stream first, as PyTorch asks):
    (graph, "", the capture's timeline when ``profiled``) or (None, the reason it could not be,
    None). Profiled, the capture's launch calls and the ops they were made in are what the
    replay's kernels are given to (graphs.py)."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            with Recorder(gpu=False):
                call()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        if not profiled:
            with Recorder(gpu=False):
                with torch.cuda.graph(g):
                    call()
            torch.cuda.synchronize()
            return g, "", None
        from torch.profiler import ProfilerActivity, profile, record_function

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            with Recorder(gpu=False), record_function(CAPTURE_RANGE):
                with torch.cuda.graph(g):
                    call()
        torch.cuda.synchronize()
        return g, "", from_kineto(prof.profiler.kineto_results.events())
    except Exception as e:  # noqa: BLE001 - a step that cannot be captured is told, not fatal
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return None, _first_line(e), None


def run_gpu(call, name, dev, torch, warmup, repeats, graph, metrics, options):
    for _ in range(warmup):
        with Recorder(gpu=False) as rec:
            call()
        rec.check_closed()
    torch.cuda.synchronize()
    walls = _timed(torch, call, repeats)
    with OpCounter() as counter:  # the inference run: never timed
        call()
    torch.cuda.synchronize()
    records = list(counter.records)
    extra = {"mode": "eager", "graph_us": math.nan, "graph_error": "" if graph != "off" else "not asked (graph='off')"}
    g = cap = None
    if graph != "off":
        g, err, cap = _capture(torch, call, profiled=graph == "on")
        extra["graph_error"] = err
        if g is not None:
            g.replay()
            extra["graph_us"] = float(np.median(_timed(torch, g.replay, max(repeats, 3))))
    if graph == "on":
        if g is None:
            raise ValueError(f"graph: 'on' profiles the step's graph replay, but the step could not be "
                             f"captured in a CUDA graph ({extra['graph_error']}); use graph='auto'")
        return _graph_report(torch, call, g, cap, name, dev, records, repeats, extra, options)
    t, region_calls, _ = profiled_runs(torch, call, repeats)
    report = gpu_report(name, dev, t, region_calls, records, float(np.median(walls)), options, repeats, extra)
    if metrics:
        from .counters import attach_counters
        attach_counters(report, torch, call, metrics, records)
    return report


def _graph_report(torch, call, g, cap, name, dev, records, repeats, extra, options):
    """The graph replay profiled as the step, each replayed kernel given to the op captured in
    its place (graphs.py: the capture's launches in order, else the kernel names of one eager
    profiled run of the same step)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    captured, info = capture_ops(cap, records) if cap is not None else ([], {"capture_range": False})
    eager_t, _, _ = profiled_runs(torch, call, 1)
    eager = eager_kernels(_launches(eager_t, records))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for rep in range(repeats):
            with record_function(f"{STEP_RANGE}{rep}"):
                g.replay()
                with record_function(SYNC_RANGE):
                    torch.cuda.synchronize()
    t = from_kineto(prof.profiler.kineto_results.events())
    got = attribute_replay(t, captured, eager, info)
    extra = dict(extra, mode="graph", graph_attribution=got["text"], graph_attributed_by=got["method"])
    walls = _timed(torch, g.replay, repeats)
    return gpu_report(name, dev, t, {}, records, float(np.median(walls)), options, repeats, extra)
