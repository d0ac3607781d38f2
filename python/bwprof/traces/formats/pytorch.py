"""PyTorch profiler: Chrome trace JSON (``.json`` or ``.json.gz``).

The document is parsed once (json); the GPU events are then picked out and each column is made
in one pass over them, the numbers converted by numpy, so that a trace of hundreds of thousands
of events costs little more than its parse.
"""

import math

import numpy as np

from ..errors import TraceFormatError
from ..csv_columns import _text
from ..source import _read_json
from ..table import Note, Origin, _as_float, reader, schema_frame

# Event categories that are GPU work; copies and fills count as GPU time too.
_TORCH_GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
_INT64 = 2.0 ** 63


def _is_gpu(cat):
    return cat in _TORCH_GPU_CATS or (isinstance(cat, str) and cat.lower() in _TORCH_GPU_CATS)


def _gpu_events(events):
    """Positions of the complete ("X") events of a GPU category; each distinct category is
    judged once."""
    try:
        cats = {ev.get("cat") for ev in events if type(ev) is dict}
        gpu = {c for c in cats if _is_gpu(c)}
        return [k for k, ev in enumerate(events)
                if type(ev) is dict and ev.get("cat") in gpu and ev.get("ph", "X") == "X"]
    except TypeError:                   # a category that is a list or an object
        return [k for k, ev in enumerate(events)
                if isinstance(ev, dict) and _is_gpu(ev.get("cat")) and ev.get("ph", "X") == "X"]


def _triples(values):
    """Three lists (x, y, z) from [x, y, z] values; anything else gives None."""
    xs, ys, zs = [], [], []
    for v in values:
        if type(v) is list and len(v) == 3:
            x, y, z = v
        else:
            x = y = z = None
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return xs, ys, zs


def _base_ns(path, doc):
    value = doc.get("baseTimeNanoseconds", 0) or 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            (isinstance(value, float) and not math.isfinite(value)) or not -_INT64 < value < _INT64:
        raise TraceFormatError(path, None, f"baseTimeNanoseconds {value!r} is not a 64-bit integer "
                                           "number of nanoseconds")
    return int(value)


@reader
def read_pytorch_trace(path):
    """PyTorch profiler Chrome trace (``.json`` or ``.json.gz``) -> one row per GPU event.

    Kernel, gpu_memcpy and gpu_memset events; ``ts``/``dur`` are microseconds in the file.
    """
    doc = _read_json(path)
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        base_ns = _base_ns(path, doc)
    else:
        events, base_ns = doc, 0
    if not isinstance(events, list):
        raise TraceFormatError(path, 1, "JSON without a traceEvents list: not a PyTorch/Chrome trace")
    index = _gpu_events(events)
    gpu = [events[k] for k in index]
    n = len(gpu)
    ts_raw = [ev.get("ts") for ev in gpu]
    ts = _numbers(path, ts_raw, index, gpu, "ts", allow_missing=False)
    dur = _numbers(path, [ev.get("dur") for ev in gpu], index, gpu, "dur", allow_missing=True)
    args = [a if type(a) is dict else {} for a in (ev.get("args") for ev in gpu)]
    grid = _triples([a.get("grid") for a in args])
    block = _triples([a.get("block") for a in args])

    # Start and end in integer ns: base + round(us * 1000), exact where the numbers fit.
    bad = {}
    with np.errstate(invalid="ignore", over="ignore"):
        start_f = np.round(ts * 1000.0)
        end_f = start_f + np.round(dur * 1000.0)
    start = _offset(start_f, base_ns, ts_raw, "start_ns", bad)
    end = _offset(end_f, base_ns, None, "end_ns", bad, keep_nan=True)
    cols = {
        "kernel_name": np.array([str(ev.get("name", "")) for ev in gpu], dtype=object),
        "start_ns": start,
        "end_ns": end,
        "duration_ns": dur * 1000.0,
        "grid_x": grid[0], "grid_y": grid[1], "grid_z": grid[2],
        "block_x": block[0], "block_y": block[1], "block_z": block[2],
        "registers": [a.get("registers per thread") for a in args],
        "shared_mem_bytes": [a.get("shared memory") for a in args],
        "device": _text([a.get("device", ev.get("pid")) for a, ev in zip(args, gpu)]),
        "stream": _text([a.get("stream", ev.get("tid")) for a, ev in zip(args, gpu)]),
        "correlation_id": [a.get("correlation") for a in args],
    }
    extras = {"event_category": np.array([str(ev.get("cat")) for ev in gpu], dtype=object)}
    origin = Origin(path, "traceEvents[{}]", lambda rows: [index[r] for r in rows])
    return schema_frame(cols, n, "pytorch", extras, origin=origin, bad=bad)


def _numbers(path, values, index, gpu, key, allow_missing):
    """float64 array of a JSON field; a value that is not a number is a TraceFormatError naming
    its event (a missing ``ts`` too; a missing ``dur`` is NaN, an invalid row)."""
    try:
        out = _as_float(values)
        if allow_missing or not np.isnan(out).any():
            return out
    except (TypeError, ValueError):
        pass
    for k, v in enumerate(values):
        if v is None and allow_missing:
            continue
        try:
            number = float(v)
            ok = not isinstance(v, str) and not math.isnan(number) or allow_missing
        except OverflowError:
            ok = True
        except (TypeError, ValueError):
            ok = False
        if not ok or v is None:
            raise TraceFormatError(path, None, f"traceEvents[{index[k]}] ({gpu[k].get('name')!r}) "
                                               f"has no numeric {key}: {v!r}")
    return _as_float(values)


def _offset(ns, base_ns, raw, name, bad, keep_nan=False):
    """Int64 array of ``ns + base_ns``; values beyond 64 bits (or infinite) are recorded in
    ``bad`` and left NA."""
    import pandas as pd

    with np.errstate(invalid="ignore"):
        fits = np.isfinite(ns) & (np.abs(ns) < _INT64)
    # A margin of 4096 ns: floats near 2^63 are 2048 apart.
    low, high = -_INT64 + 4096 - base_ns, _INT64 - 4096 - base_ns
    with np.errstate(invalid="ignore"):
        fits &= (ns >= low) & (ns <= high)
    values = np.where(fits, ns, 0.0).astype(np.int64)
    values[fits] += base_ns
    wrong = np.flatnonzero(~fits & ~np.isnan(ns))
    if len(wrong):
        bad[name] = {int(i): Note(f"ts {raw[i]!r} us, beyond 64-bit nanoseconds" if raw is not None
                                  else "ts + dur beyond 64-bit nanoseconds") for i in wrong}
    return pd.arrays.IntegerArray(values, ~fits)
