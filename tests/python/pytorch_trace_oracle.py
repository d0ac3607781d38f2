"""The PyTorch trace reader as it was before it was made fast (commit ff6122e): one Python
expression per event and field, every integer column converted value by value. The tests hold
the fast reader (bwprof.traces.formats.pytorch) to this one's frames, errors and warnings.

The helpers that did not change (baseTimeNanoseconds, the ts/dur numbers, the ns offsets, the
device/stream labels) are the reader's own; integer columns are handed to schema_frame as
object arrays, which take table._as_int64's value-by-value path as every list did then.
"""

import numpy as np

from bwprof.traces import TraceFormatError
from bwprof.traces.csv_columns import _text
from bwprof.traces.formats.pytorch import _base_ns, _boolean_durations, _numbers, _offset
from bwprof.traces.source import _read_json
from bwprof.traces.table import Origin, reader, schema_frame

_TORCH_GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def _is_gpu(cat):
    return cat in _TORCH_GPU_CATS or (isinstance(cat, str) and cat.lower() in _TORCH_GPU_CATS)


def _gpu_events(events):
    try:
        cats = {ev.get("cat") for ev in events if type(ev) is dict}
        gpu = {c for c in cats if _is_gpu(c)}
        return [k for k, ev in enumerate(events)
                if type(ev) is dict and ev.get("cat") in gpu and ev.get("ph", "X") == "X"]
    except TypeError:
        return [k for k, ev in enumerate(events)
                if isinstance(ev, dict) and _is_gpu(ev.get("cat")) and ev.get("ph", "X") == "X"]


def _triples(values):
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


def _objects(values):
    return np.asarray(values, dtype=object)


@reader
def read_pytorch_trace_plain(path):
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
    names = [ev.get("name") for ev in gpu]
    ts = _numbers(path, ts_raw, index, names, "ts", allow_missing=False)
    dur = _numbers(path, [ev.get("dur") for ev in gpu], index, names, "dur", allow_missing=True)
    args = [a if type(a) is dict else {} for a in (ev.get("args") for ev in gpu)]
    grid = _triples([a.get("grid") for a in args])
    block = _triples([a.get("block") for a in args])
    bad = {}
    dur = _boolean_durations(dur, [ev.get("dur") for ev in gpu], bad)  # issue 45: true is not 1 us
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
        "grid_x": _objects(grid[0]), "grid_y": _objects(grid[1]), "grid_z": _objects(grid[2]),
        "block_x": _objects(block[0]), "block_y": _objects(block[1]), "block_z": _objects(block[2]),
        "registers": _objects([a.get("registers per thread") for a in args]),
        "shared_mem_bytes": _objects([a.get("shared memory") for a in args]),
        "device": _text([a.get("device", ev.get("pid")) for a, ev in zip(args, gpu)]),
        "stream": _text([a.get("stream", ev.get("tid")) for a, ev in zip(args, gpu)]),
        "correlation_id": _objects([a.get("correlation") for a in args]),
    }
    extras = {"event_category": np.array([str(ev.get("cat")) for ev in gpu], dtype=object)}
    origin = Origin(path, "traceEvents[{}]", lambda rows: [index[r] for r in rows])
    return schema_frame(cols, n, "pytorch", extras, origin=origin, bad=bad)
