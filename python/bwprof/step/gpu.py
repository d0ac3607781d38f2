"""The GPU side of ``profile_step`` (PyTorch): warm-up, plain timed calls, the inference run, the
profiled runs, and the step captured in a CUDA/HIP graph (its replay timed, or profiled as the
step with its kernels given to the ops that were captured)."""
from __future__ import annotations

import math
import time

import numpy as np

from ..framework.torch_ops import OpCounter
from .attribute import _innermost, _nest, align
from .regions import Recorder
from .run import gpu_report, profiled_runs
from .timeline import STEP_RANGE, SYNC_RANGE, from_kineto

CAPTURE_RANGE = "bwprof.capture"
_LAUNCH_WORDS = ("LaunchKernel", "LaunchCooperativeKernel", "MemcpyAsync", "MemsetAsync", "Memset", "ExtLaunch",
                 "ModuleLaunch")


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


def _capture(torch, call):
    """The step captured in a CUDA/HIP graph (warmed up on a side stream first, as PyTorch asks),
    or the reason it could not be."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            with Recorder(gpu=False):
                call()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with Recorder(gpu=False):
            with torch.cuda.graph(g):
                call()
        torch.cuda.synchronize()
        return g, ""
    except Exception as e:  # noqa: BLE001 - a step that cannot be captured is told, not fatal
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return None, _first_line(e)


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
    g = None
    if graph != "off":
        g, err = _capture(torch, call)
        extra["graph_error"] = err
        if g is not None:
            g.replay()
            extra["graph_us"] = float(np.median(_timed(torch, g.replay, max(repeats, 3))))
    if graph == "on":
        if g is None:
            raise ValueError(f"graph: 'on' profiles the step's graph replay, but the step could not be "
                             f"captured in a CUDA graph ({extra['graph_error']}); use graph='auto'")
        return _graph_report(torch, call, g, name, dev, records, repeats, extra, options)
    t, region_calls, _ = profiled_runs(torch, call, repeats)
    report = gpu_report(name, dev, t, region_calls, records, float(np.median(walls)), options, repeats, extra)
    if metrics:
        from .counters import attach_counters
        attach_counters(report, torch, call, metrics, records)
    return report


def _launch_calls(t, rng) -> list:
    """The runtime calls that put work on the device inside ``rng``, in order."""
    return [r for r in t.runtime if rng.start_ns <= r.start_ns <= rng.end_ns and any(w in r.name for w in _LAUNCH_WORDS)]


def _graph_report(torch, call, g, name, dev, records, repeats, extra, options):
    """The graph replay profiled as the step: each replayed kernel given to the op whose launch
    was captured in its place (the i-th kernel of a replay is the i-th launch of the capture)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    g2 = torch.cuda.CUDAGraph()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with OpCounter() as counter, record_function(CAPTURE_RANGE):
            with torch.cuda.graph(g2):
                call()
    torch.cuda.synchronize()
    cap = from_kineto(prof.profiler.kineto_results.events())
    captured = list(counter.records) or records
    rng = next((h for h in cap.host if h.name == CAPTURE_RANGE), None)
    launch_ops = []
    if rng is not None:
        ops = [h for h in cap.host if h.kind == "op" and h.thread == rng.thread and rng.start_ns <= h.start_ns
               and h.end_ns <= rng.end_ns]
        parents, match = _nest(ops), align(ops, captured)
        by_corr = {o.corr: i for i, o in enumerate(ops)}
        starts = [o.start_ns for o in ops]
        for lc in _launch_calls(cap, rng):
            k = by_corr.get(lc.linked, -1)
            if k < 0:  # no link: the op the launch call ran in
                k = _innermost(ops, parents, starts, lc.start_ns)
            while k >= 0 and k not in match:
                k = parents[k]
            launch_ops.append((k, match.get(k, -1)))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for rep in range(repeats):
            with record_function(f"{STEP_RANGE}{rep}"):
                g2.replay()
                with record_function(SYNC_RANGE):
                    torch.cuda.synchronize()
    t = from_kineto(prof.profiler.kineto_results.events())
    # Each replayed span gets the op whose launch the capture made in its place.
    launched = {r.corr: r.start_ns for r in t.runtime if r.corr}
    for step in t.steps():
        spans = sorted((d for d in t.device if step.start_ns <= launched.get(d.corr, d.start_ns) <= step.end_ns),
                       key=lambda d: d.start_ns)
        if len(spans) != len(launch_ops):
            extra["graph_attribution"] = (f"a replay ran {len(spans)} kernels, the capture launched "
                                          f"{len(launch_ops)}: the kernels are not given to ops")
            continue
        for d, (k, rec) in zip(spans, launch_ops):
            d.record, d.instance = rec, f"g{k}"
    extra = dict(extra, mode="graph")
    walls = _timed(torch, g2.replay, repeats)
    return gpu_report(name, dev, t, {}, captured, float(np.median(walls)), options, repeats, extra)
