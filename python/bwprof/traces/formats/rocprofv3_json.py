"""rocprofv3's JSON output (``--output-format json``, ``results.json``).

The document holds ``"rocprofiler-sdk-tool"``: one entry per profiled process with its
``metadata`` (pid), ``agents``, ``kernel_symbols``, ``counters``, ``strings`` (the names of
record kinds and operations) and ``buffer_records`` (``kernel_dispatch``, ``memory_copy``, ...)
and ``callback_records.counter_collection``. Dispatch grid sizes count work-items, as in the
CSV; the schema's grid counts work-groups.

The Perfetto trace (``--output-format pftrace``) is a protobuf stream; bwprof does not read it
(use the rocpd database, JSON or CSV output of the same run).
"""

import math

import numpy as np

from ..errors import TraceFormatError
from ..source import _read_json
from ..table import SCHEMA, Origin, _as_float, empty_frame, reader, schema_frame
from .rocpd import copy_name

TOOL = "rocprofv3"
KEY = "rocprofiler-sdk-tool"


class _Doc:
    """Walks the JSON with error messages that say where a value was missing."""

    def __init__(self, path):
        self.path = path

    def fail(self, where, reason):
        return TraceFormatError(self.path, None, f"{where}: {reason}")

    def get(self, obj, key, where, kind=None, default=KeyError):
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, found {type(obj).__name__}")
        if key not in obj:
            if default is KeyError:
                raise self.fail(where, f"missing {key!r}")
            return default
        value = obj[key]
        if kind is not None and not isinstance(value, kind):
            raise self.fail(f"{where}.{key}", f"expected {kind.__name__}, found {type(value).__name__}")
        return value

    def num(self, obj, key, where, default=KeyError):
        value = self.get(obj, key, where, default=default)
        if value is None or (value is default and default is not KeyError):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"{where}.{key}", f"{value!r} is not a number")
        return value

    def handle(self, obj, key, where):
        value = self.get(obj, key, where, default=None)
        if isinstance(value, dict):
            return value.get("handle")
        return value


def _device_labels(doc, agents, where):
    """{agent handle: "GPU 0"} from the agents list (logical_node_type_id, else GPU order)."""
    out, gpus = {}, 0
    for k, agent in enumerate(agents if isinstance(agents, list) else []):
        w = f"{where}.agents[{k}]"
        handle = doc.handle(agent, "id", w)
        kind = agent.get("type") if isinstance(agent, dict) else None
        is_gpu = kind == 2 or str(kind).upper() == "GPU"
        index = agent.get("logical_node_type_id") if isinstance(agent, dict) else None
        if is_gpu:
            out[handle] = f"GPU {index if index is not None else gpus}"
            gpus += 1
        else:
            out[handle] = f"CPU {index if index is not None else 0}"
    return out


def _symbols(doc, symbols, where):
    """{kernel_id: (name, vgpr + agpr or None, sgpr or None)}."""
    out = {}
    for k, sym in enumerate(symbols if isinstance(symbols, list) else []):
        if not isinstance(sym, dict):
            raise doc.fail(f"{where}.kernel_symbols[{k}]", "expected an object")
        kid = sym.get("kernel_id", k)
        name = (sym.get("formatted_kernel_name") or sym.get("demangled_kernel_name")
                or sym.get("kernel_name") or "")
        vgpr = sym.get("arch_vgpr_count")
        regs = None if vgpr is None else vgpr + (sym.get("accum_vgpr_count") or 0)
        out[kid] = (name, regs, sym.get("sgpr_count"))
    return out


def _operation_names(doc, strings, kind):
    """The operation names of one buffer record kind ("MEMORY_COPY") from ``strings``."""
    for entry in (strings or {}).get("buffer_records", []) if isinstance(strings, dict) else []:
        if isinstance(entry, dict) and entry.get("kind") == kind:
            return entry.get("operations") or []
    return []


def _ceil_div(items, group):
    if items is None or not group:
        return None
    try:
        return -(-int(items) // int(group))
    except (OverflowError, ValueError, TypeError):
        return items                    # inf or junk: the frame builder reports the row


@reader
def read_rocprofv3_json(path, memory_copies=True):
    """rocprofv3 JSON (``results.json``) -> one row per kernel dispatch (counters collected in
    the same run joined by dispatch id, instances summed), plus memory copies
    (``event_category`` "gpu_memcpy") unless ``memory_copies=False``.
    """
    raw = _read_json(path)          # gzip, empty, binary and malformed files handled there
    doc = _Doc(path)
    if not isinstance(raw, dict) or KEY not in raw:
        raise TraceFormatError(path, None, f"JSON without a {KEY!r} key: not rocprofv3 output")
    processes = raw[KEY]
    if isinstance(processes, dict):
        processes = [processes]
    if not isinstance(processes, list):
        raise doc.fail(KEY, "expected a list of processes")
    rows, counter_names = [], []
    for p, proc in enumerate(processes):
        where = f"{KEY}[{p}]"
        meta = doc.get(proc, "metadata", where, dict, default={})
        pid = meta.get("pid")
        devices = _device_labels(doc, doc.get(proc, "agents", where, list, default=[]), where)
        symbols = _symbols(doc, doc.get(proc, "kernel_symbols", where, list, default=[]), where)
        counters = {doc.handle(c, "id", f"{where}.counters[{k}]"): str(c.get("name"))
                    for k, c in enumerate(doc.get(proc, "counters", where, list, default=[]))}
        values = _counter_values(doc, proc, where, counters)
        for name in values.get("__names__", []):
            if name not in counter_names:
                counter_names.append(name)
        buffers = doc.get(proc, "buffer_records", where, dict, default={})
        dispatches = doc.get(buffers, "kernel_dispatch", f"{where}.buffer_records", list, default=[])
        for k, rec in enumerate(dispatches):
            w = f"{where}.buffer_records.kernel_dispatch[{k}]"
            info = doc.get(rec, "dispatch_info", w, dict)
            kid = doc.num(info, "kernel_id", f"{w}.dispatch_info")
            if kid not in symbols:
                raise doc.fail(f"{w}.dispatch_info", f"kernel_id {kid} is not in kernel_symbols")
            name, regs, sgpr = symbols[kid]
            wg = doc.get(info, "workgroup_size", f"{w}.dispatch_info", dict)
            grid = doc.get(info, "grid_size", f"{w}.dispatch_info", dict)
            dispatch_id = doc.num(info, "dispatch_id", f"{w}.dispatch_info", default=None)
            row = {
                "kernel_name": name,
                "start_ns": doc.num(rec, "start_timestamp", w),
                "end_ns": doc.num(rec, "end_timestamp", w),
                "registers": regs,
                "shared_mem_bytes": info.get("group_segment_size"),
                "device": devices.get(doc.handle(info, "agent_id", f"{w}.dispatch_info")),
                "stream": _text(doc.handle(rec, "stream_id", w)) or _text(doc.handle(info, "queue_id", w)),
                "correlation_id": (rec.get("correlation_id") or {}).get("internal")
                if isinstance(rec.get("correlation_id"), dict) else rec.get("correlation_id"),
                "pid": pid,
                "dispatch_id": dispatch_id,
                "queue_id": _text(doc.handle(info, "queue_id", w)),
                "tid": rec.get("thread_id"),
                "sgpr": sgpr,
                "scratch_bytes": info.get("private_segment_size"),
                "event_category": "kernel",
            }
            for axis in "xyz":
                g = doc.num(grid, axis, f"{w}.dispatch_info.grid_size", default=None)
                b = doc.num(wg, axis, f"{w}.dispatch_info.workgroup_size", default=None)
                row[f"grid_{axis}"] = _ceil_div(g, b)
                row[f"block_{axis}"] = b
            row.update(values.get(dispatch_id, {}))
            row["__where__"] = w
            rows.append(row)
        if memory_copies:
            ops = _operation_names(doc, proc.get("strings"), "MEMORY_COPY")
            for k, rec in enumerate(doc.get(buffers, "memory_copy", f"{where}.buffer_records", list,
                                            default=[])):
                w = f"{where}.buffer_records.memory_copy[{k}]"
                op = rec.get("operation") if isinstance(rec, dict) else None
                op_name = ops[op] if isinstance(op, int) and 0 <= op < len(ops) else f"operation {op}"
                src = devices.get(doc.handle(rec, "src_agent_id", w), "")
                dst = devices.get(doc.handle(rec, "dst_agent_id", w), "")
                rows.append({
                    "kernel_name": copy_name(op_name),
                    "start_ns": doc.num(rec, "start_timestamp", w),
                    "end_ns": doc.num(rec, "end_timestamp", w),
                    # The GPU end of the copy names the device (host-to-device: the destination).
                    "device": dst if dst.startswith("GPU") else (src if src.startswith("GPU") else dst or None),
                    "correlation_id": (rec.get("correlation_id") or {}).get("internal")
                    if isinstance(rec.get("correlation_id"), dict) else None,
                    "pid": pid, "tid": rec.get("thread_id"), "event_category": "gpu_memcpy",
                    "bytes": rec.get("bytes"), "copy_kind": op_name, "__where__": w,
                })
    return _frame(path, rows, counter_names)


def _counter_values(doc, proc, where, counters):
    """{dispatch_id: {counter name: summed value}} from callback_records.counter_collection."""
    callbacks = proc.get("callback_records") if isinstance(proc, dict) else None
    records = callbacks.get("counter_collection", []) if isinstance(callbacks, dict) else []
    out, names = {}, []
    for k, rec in enumerate(records if isinstance(records, list) else []):
        w = f"{where}.callback_records.counter_collection[{k}]"
        data = doc.get(rec, "dispatch_data", w, dict)
        info = doc.get(data, "dispatch_info", f"{w}.dispatch_data", dict)
        dispatch_id = doc.num(info, "dispatch_id", f"{w}.dispatch_data.dispatch_info")
        slot = out.setdefault(dispatch_id, {})
        for j, item in enumerate(doc.get(rec, "records", w, list, default=[])):
            cid = doc.handle(item, "counter_id", f"{w}.records[{j}]")
            name = counters.get(cid, f"counter {cid}")
            value = doc.num(item, "value", f"{w}.records[{j}]")
            slot[name] = slot.get(name, 0.0) + _as_float([value])[0]
            if name not in names:
                names.append(name)
    out["__names__"] = names
    return out


def _text(value):
    return None if value is None else str(value)


def _frame(path, rows, counter_names):
    extras = ["dispatch_id", "queue_id", "tid", "sgpr", "scratch_bytes", "event_category"]
    if not rows:
        return empty_frame(TOOL, extras)
    n = len(rows)
    cols = {}
    for name, dtype in SCHEMA.items():
        if any(name in r for r in rows):
            column = [r.get(name) for r in rows]
            # Int64 columns go to the builder as they are: it reports values beyond 64 bits.
            cols[name] = column if dtype == "Int64" else np.array(column, dtype=object)
    more = {}
    for name in extras + ["bytes", "copy_kind"] + counter_names:
        if not any(name in r for r in rows):
            continue
        column = [r.get(name) for r in rows]
        if name in ("dispatch_id", "tid"):
            more[name] = column
        elif name in ("queue_id", "event_category", "copy_kind"):
            more[name] = np.array(column, dtype=object)
        else:
            more[name] = _as_float([math.nan if v is None else v for v in column])
    where = [r["__where__"] for r in rows]
    origin = Origin(path, "{}", lambda picked: [where[i] for i in picked])
    return schema_frame(cols, n, TOOL, more, origin=origin, int_extras=("dispatch_id", "tid"))
