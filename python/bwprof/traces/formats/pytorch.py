"""PyTorch profiler: Chrome trace JSON (``.json`` or ``.json.gz``).

``traceEvents`` is parsed 64 KiB at a time (source._json_array_pieces; the same values as one
parse of the file, which is what happens to a file that does not split so), with Python's
garbage collector paused (source.paused_gc). From each piece the GPU events are picked and
their fields taken at C speed (``map`` over ``dict.get``) while its objects are still in the
processor's caches, and the CPU-side events, most of a trace, are freed before the next piece.
The columns are then made by numpy (integer columns and grid triples in one call where they
hold only integers), and kernel names are shortened once per distinct name (table.schema_frame).
"""

import math
import operator
from itertools import compress, repeat

import numpy as np
import pandas as pd

from ..errors import TraceFormatError
from ..csv_columns import _text
from ..source import _json_array_pieces, _read_bytes, _read_json, paused_gc
from ..table import Note, Origin, _as_float, reader, schema_frame

# Event categories that are GPU work; copies and fills count as GPU time too.
_TORCH_GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
_INT64 = 2.0 ** 63
_NO_ARGS = {}                           # shared by events without an args object; never written
_ABSENT = object()                      # an event without a name


def _is_gpu(cat):
    return isinstance(cat, str) and (cat in _TORCH_GPU_CATS or cat.lower() in _TORCH_GPU_CATS)


def _field(events, key, default=None):
    """``[ev.get(key, default) for ev in events]`` for a list of dicts, at C speed."""
    return list(map(dict.get, events, repeat(key), repeat(default)))


def _gpu_events(events):
    """Positions of the complete ("X", the default) events of a GPU category; each distinct
    category is judged once. Events that are not objects, and categories that are not text,
    are no GPU event."""
    try:
        where, cats = range(len(events)), _field(events, "cat")
    except TypeError:                   # an event that is not an object
        where = [k for k, ev in enumerate(events) if type(ev) is dict]
        cats = [events[k].get("cat") for k in where]
    try:
        gpu = {c for c in set(cats) if _is_gpu(c)}
        picked = list(compress(where, map(gpu.__contains__, cats)))
    except TypeError:                   # a category that is a list or an object
        gpu = {c for c in cats if _is_gpu(c)}
        picked = [k for k, c in zip(where, cats) if type(c) is str and c in gpu]
    phases = _field(list(map(events.__getitem__, picked)), "ph", "X")
    return list(compress(picked, map(operator.eq, phases, repeat("X"))))


def _triples(values):
    """Three Int64 columns (x, y, z) from [x, y, z] values; anything else is NA in all three.
    Integer triples become one int64 array (exact, in C); other values go one by one."""
    n = len(values)
    where = [k for k, v in enumerate(values) if type(v) is list and len(v) == 3]
    try:
        arr = np.array([values[k] for k in where]) if where else np.zeros((0, 3), dtype=np.int64)
    except (ValueError, TypeError, OverflowError):      # nested lists
        arr = None
    if arr is not None and arr.dtype == np.int64 and arr.shape == (len(where), 3):
        if len(where) == n:
            return [pd.arrays.IntegerArray(arr[:, i].copy(), np.zeros(n, dtype=bool)) for i in range(3)]
        out = []
        for i in range(3):
            data = np.zeros(n, dtype=np.int64)
            data[where] = arr[:, i]
            mask = np.ones(n, dtype=bool)
            mask[where] = False
            out.append(pd.arrays.IntegerArray(data, mask))
        return out
    xs, ys, zs = [None] * n, [None] * n, [None] * n
    for k in where:
        xs[k], ys[k], zs[k] = values[k]
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
    with paused_gc():
        return _read(path)


def _read(path):
    ev, base_ns = _gpu_fields(path)
    index, n = ev.index, len(ev.index)
    names = [None if v is _ABSENT else v for v in ev.name]
    ts = _numbers(path, ev.ts, index, names, "ts", allow_missing=False)
    dur = _numbers(path, ev.dur, index, names, "dur", allow_missing=True)
    grid = _triples(ev.grid)
    block = _triples(ev.block)

    # Start and end in integer ns: base + round(us * 1000), exact where the numbers fit.
    bad = {}
    dur = _boolean_durations(dur, ev.dur, bad)
    with np.errstate(invalid="ignore", over="ignore"):
        start_f = np.round(ts * 1000.0)
        end_f = start_f + np.round(dur * 1000.0)
    start = _offset(start_f, base_ns, ev.ts, "start_ns", bad)
    end = _offset(end_f, base_ns, None, "end_ns", bad, keep_nan=True)
    cols = {
        "kernel_name": np.array(["" if v is _ABSENT else str(v) for v in ev.name], dtype=object),
        "start_ns": start,
        "end_ns": end,
        "duration_ns": dur * 1000.0,
        "grid_x": grid[0], "grid_y": grid[1], "grid_z": grid[2],
        "block_x": block[0], "block_y": block[1], "block_z": block[2],
        "registers": ev.registers,
        "shared_mem_bytes": ev.shared_mem,
        "device": _text(ev.device),
        "stream": _text(ev.stream),
        "correlation_id": ev.correlation,
    }
    extras = {"event_category": np.array(list(map(str, ev.cat)), dtype=object)}
    origin = Origin(path, "traceEvents[{}]", lambda rows: [index[r] for r in rows])
    return schema_frame(cols, n, "pytorch", extras, origin=origin, bad=bad)


class _GpuEvents:
    """The fields of a trace's GPU events, gathered from one list of events at a time: from
    each piece of traceEvents while its objects are still in the processor's caches."""

    _EVENT = {"name": ("name", _ABSENT), "cat": ("cat", None), "ts": ("ts", None), "dur": ("dur", None)}
    _ARGS = {"grid": "grid", "block": "block", "registers": "registers per thread",
             "shared_mem": "shared memory", "correlation": "correlation"}

    def __init__(self):
        self.index, self.name, self.cat, self.ts, self.dur = [], [], [], [], []
        self.grid, self.block, self.registers, self.shared_mem, self.correlation = [], [], [], [], []
        self.device, self.stream = [], []

    def add(self, events, first=0):
        picked = _gpu_events(events)
        if not picked:
            return
        self.index.extend(first + k for k in picked)
        gpu = list(map(events.__getitem__, picked))
        for name, (key, default) in self._EVENT.items():
            getattr(self, name).extend(_field(gpu, key, default))
        args = [a if type(a) is dict else _NO_ARGS for a in _field(gpu, "args")]
        for name, key in self._ARGS.items():
            getattr(self, name).extend(_field(args, key))
        # The device and stream an event's args name, else its pid and tid.
        self.device.extend(map(dict.get, args, repeat("device"), _field(gpu, "pid")))
        self.stream.extend(map(dict.get, args, repeat("stream"), _field(gpu, "tid")))


def _gpu_fields(path):
    """(_GpuEvents, baseTimeNanoseconds) of the trace.

    traceEvents is parsed a piece at a time where it splits (source._json_array_pieces: the
    same events as one parse, each piece's CPU-side events freed as soon as its GPU events'
    fields are taken); otherwise, and for anything a parser refuses, the document is parsed
    whole as before.
    """
    data = _read_bytes(path)
    ev = _GpuEvents()
    split = _json_array_pieces(data, "traceEvents", ev.add)
    if split is not None:
        return ev, _base_ns(path, split)
    ev = _GpuEvents()                   # anything the pieces gave is read again
    doc = _read_json(path, data)
    del data
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        base_ns = _base_ns(path, doc)
    else:
        events, base_ns = doc, 0
    if not isinstance(events, list):
        raise TraceFormatError(path, 1, "JSON without a traceEvents list: not a PyTorch/Chrome trace")
    ev.add(events)
    return ev, base_ns


def _boolean_durations(dur, raw, bad):
    """``dur`` with JSON true/false (which Python would take for 1 and 0 us) made NaN and
    recorded in ``bad``: invalid rows, not durations."""
    flags = [k for k, v in enumerate(raw) if v is True or v is False]
    if not flags:
        return dur
    dur = dur.copy()
    dur[flags] = np.nan
    bad["duration_ns"] = {k: Note(f"dur {str(raw[k]).lower()}, a JSON boolean, not a number") for k in flags}
    return dur


def _numbers(path, values, index, names, key, allow_missing):
    """float64 array of a JSON field; a value that is not a number is a TraceFormatError naming
    its event (a missing ``ts`` too; a missing ``dur`` is NaN, an invalid row)."""
    try:
        out = _as_float(values)
        # true/false would read as 1/0: only a missing-allowed field (dur) marks them itself
        if allow_missing or not (np.isnan(out).any() or any(v is True or v is False for v in values)):
            return out
    except (TypeError, ValueError):
        pass
    for k, v in enumerate(values):
        if v is None and allow_missing:
            continue
        if (v is True or v is False) and not allow_missing:
            raise TraceFormatError(path, None, f"traceEvents[{index[k]}] ({names[k]!r}) "
                                               f"has no numeric {key}: {str(v).lower()} (a JSON boolean)")
        try:
            number = float(v)
            ok = not isinstance(v, str) and not math.isnan(number) or allow_missing
        except OverflowError:
            ok = True
        except (TypeError, ValueError):
            ok = False
        if not ok or v is None:
            raise TraceFormatError(path, None, f"traceEvents[{index[k]}] ({names[k]!r}) "
                                               f"has no numeric {key}: {v!r}")
    return _as_float(values)


def _offset(ns, base_ns, raw, name, bad, keep_nan=False):
    """Int64 array of ``ns + base_ns``; values beyond 64 bits (or infinite) are recorded in
    ``bad`` and left NA."""
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
