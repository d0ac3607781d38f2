"""Running a workload: every step's memory checked first, every distinct op timed on its own (the
runner's normal path: `bwprof.measure` for kernels, `bwprof.profile` for callables), then every
step timed whole (one graph on a GPU), and the report assembled (report.py)."""
from __future__ import annotations

import sys
from typing import Any

from .. import _core
from .. import arguments as _args
from ..api import TIMINGS, measure
from ..streams import current_handle
from ..usercode import profile
from .ops import Workload
from .report import Report, build_report

SETS = {"auto": 0, "every": -1}


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


def _core_ops(ops: list, w: Workload) -> list[dict]:
    out = []
    for op in ops:
        if op.is_user:
            out.append({"name": op.name, "fn": op.fn, "count": op.count,
                        "bytes": float(op.bytes_read) + float(op.bytes_written)})
        else:
            out.append({"name": op.name, "kernel": op.kernel, "variant": op.variant or "",
                        "dtype": op.dtype or w.dtype, "params": _text_params(op.params), "count": op.count})
    return out


def run_workload(w: Workload, *, device: str = "auto", op_timing: str = "single", cache: str = "cold",
                 warmup: int = 2, repeats: int = 10, min_time_s: float = 0.05, max_time_s: float = 2.0,
                 sets: Any = "auto", verify: bool = True, graph: bool = True, progress: bool = False) -> Report:
    """Times ``w``: each distinct op on its own (``op_timing`` "single": one launch after the L2
    flush, bwprof's standard row; "graph": launches back to back over rotated inputs), each step
    whole; returns a :class:`Report`."""
    if not isinstance(w, Workload):
        raise TypeError(f"workload: expected a Workload (bwprof.workload(...)), got {type(w).__name__}")
    device = _args.text("device", device)
    op_timing = _args.text("op_timing", op_timing, TIMINGS)
    cache = _args.text("cache", cache, ("cold", "hot"))
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, _args.MAX_REPEATS)
    min_time_s = _args.seconds("min_time_s", min_time_s)
    max_time_s = _args.seconds("max_time_s", max_time_s)
    nsets = _sets(sets)
    verify = _args.flag("verify", verify)
    graph = _args.flag("graph", graph)
    dev = _core.device_info(device)
    gpu = dev["kind"] != "cpu"
    say = (lambda text: sys.stderr.write(f"bwprof model: {text}\n")) if progress else (lambda text: None)

    steps = w.steps()
    # Every step's instances against the memory there is, before anything is made or timed.
    plans = {name: _core.plan_step(dev["id"], _core_ops(ops, w), nsets) for name, _, ops in steps}
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
            m = profile(op.fn, name=op.name, bytes_read=op.bytes_read, bytes_written=op.bytes_written,
                        flops=op.flops or None, dtype=op.dtype or w.dtype, device=dev["id"], cache=cache,
                        warmup=warmup, repeats=repeats, min_time_s=min_time_s, max_time_s=max_time_s,
                        stream=stream)
        else:
            try:
                m = measure(op.kernel, dtype=op.dtype or w.dtype, device=dev["id"], variant=op.variant,
                            cache=cache, warmup=warmup, repeats=repeats, min_time_s=min_time_s,
                            max_time_s=max_time_s, verify=verify, timing=op_timing, **op.params)
            except ValueError as e:
                raise ValueError(f"op '{op.name}': {e}") from None
        measured[key] = m.to_dict()

    timed = {}
    for name, applied, ops in steps:
        say(f"step '{name}': {plans[name]['launches']} launches")
        timed[name] = _core.time_step(dev["id"], _core_ops(ops, w), nsets, warmup, repeats, min_time_s,
                                      max(repeats, 1000), max_time_s, verify, graph, stream)

    peaks = _core.peaks(dev["id"], w.dtype)
    by_op = {op.name: measured[_key(op, op.dtype or w.dtype)] for op in w.ops}
    options = {"op_timing": op_timing, "cache": cache, "sets": sets, "repeats": repeats, "graph": graph}
    return build_report(w, dev, steps, by_op, timed, peaks, options)
