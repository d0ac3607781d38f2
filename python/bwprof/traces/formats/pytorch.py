"""PyTorch profiler: Chrome trace JSON (``.json`` or ``.json.gz``)."""

import numpy as np

from ..errors import TraceFormatError
from ..table import SCHEMA, _frame, _read_json, _text

# Event categories that are GPU work; copies and fills count as GPU time too.
_TORCH_GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def read_pytorch_trace(path):
    """PyTorch profiler Chrome trace (``.json`` or ``.json.gz``) -> one row per GPU event.

    Kernel, gpu_memcpy and gpu_memset events; ``ts``/``dur`` are microseconds in the file.
    """
    doc = _read_json(path)
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        base_ns = int(doc.get("baseTimeNanoseconds", 0) or 0)
    else:
        events, base_ns = doc, 0
    if not isinstance(events, list):
        raise TraceFormatError(path, 1, "JSON without a traceEvents list: not a PyTorch/Chrome trace")
    rows = []
    for k, ev in enumerate(events):
        if not isinstance(ev, dict) or str(ev.get("cat", "")).lower() not in _TORCH_GPU_CATS:
            continue
        if ev.get("ph", "X") != "X":
            continue
        try:
            ts = float(ev["ts"])
            dur = float(ev.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            raise TraceFormatError(path, None, f"traceEvents[{k}] ({ev.get('name')!r}) has no "
                                               "numeric ts/dur") from None
        args = ev.get("args") or {}
        grid = args.get("grid") or [None] * 3
        block = args.get("block") or [None] * 3
        start = base_ns + int(round(ts * 1000.0))
        rows.append({
            "kernel_name": str(ev.get("name", "")),
            "start_ns": start,
            "end_ns": start + int(round(dur * 1000.0)),
            "duration_ns": dur * 1000.0,
            "grid_x": grid[0], "grid_y": grid[1], "grid_z": grid[2],
            "block_x": block[0], "block_y": block[1], "block_z": block[2],
            "registers": args.get("registers per thread"),
            "shared_mem_bytes": args.get("shared memory"),
            "device": args.get("device", ev.get("pid")),
            "stream": args.get("stream", ev.get("tid")),
            "correlation_id": args.get("correlation"),
            "event_category": str(ev.get("cat")),
        })
    cols = {name: [r[name] for r in rows] for name in SCHEMA if name in (rows[0] if rows else {})}
    if not rows:
        cols = {"kernel_name": []}
    cols["device"] = _text(cols.get("device"))
    cols["stream"] = _text(cols.get("stream"))
    if rows:
        cols["duration_ns"] = np.array(cols["duration_ns"], dtype="float64")
    extras = {"event_category": [r["event_category"] for r in rows]}
    return _frame(cols, len(rows), "pytorch", extras)
