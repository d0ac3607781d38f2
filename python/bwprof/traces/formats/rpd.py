"""rocmProfileData's ``.rpd`` databases: an older tracer (rpd_tracer, ``runTracer.sh``) whose
SQLite schema is also called "rocpd" but is unrelated to rocprofiler-sdk's rocpd.

GPU work is in ``rocpd_op``: one row per operation on a GPU queue, its type in ``opType``
(through ``rocpd_string``) and, for kernels, the kernel name in ``description``. Kernel ops are
"KernelExecution" (roctracer/rocprofiler), "Kernel"/"ConcurrentKernel" (CUPTI) and "Task"
(HIP graph and other task dispatches, which are kernels too); copies are "Copy*"/"Memcpy",
fills "FillBuffer"/"Memset"; markers and barriers are not GPU time and are skipped.

Launch arguments come from ``rocpd_kernelapi`` through ``rocpd_api_ops``. Its ``gridX`` holds
whatever the launching API was given: blocks for hipLaunchKernel, work-items for
hipModuleLaunchKernel/hipExtModuleLaunchKernel and for rocprofiler-based collection. Which one
a row holds is not recorded, so the schema's ``grid_x/y/z`` stay NA and the raw values are kept
as ``rpd_grid_x/y/z``; ``block_*`` (work-group size) is unambiguous and filled.
"""

import re

import numpy as np
import pandas as pd

from ..sqlitedb import (Database, Origin, codes, empty_frame, int_array, int_columns, real_values,
                        schema_frame, spread)
from ..table import reader

TOOL = "rpd"
_KERNEL_OPS = {"kernelexecution", "kernel", "concurrentkernel", "task"}
_FILL_OPS = {"fillbuffer", "memset"}
_EXTRAS = ("queue_id", "op_type", "event_category", "rpd_grid_x", "rpd_grid_y", "rpd_grid_z",
           "scratch_bytes")


def _op_class(op_type, description):
    """("kernel" | "gpu_memcpy" | "gpu_memset" | None, display name) for one op type."""
    t = str(op_type or "")
    low = t.lower()
    if low in _FILL_OPS:
        return "gpu_memset", "[memset]"
    if low.startswith("copy") or low == "memcpy":
        m = re.match(r"copy(host|device|peer)to(host|device|peer)$", low)
        where = f"{m.group(1).title()}-to-{m.group(2).title()}" if m else (t[4:] or "Unknown")
        return "gpu_memcpy", f"[memcpy {where}]"
    if low in _KERNEL_OPS or (description and low not in ("marker", "") and "barrier" not in low):
        return "kernel", description or t
    return None, None


@reader
def read_rpd(path, memory_ops=True):
    """rocmProfileData ``.rpd`` database -> one row per kernel op, plus copies and fills
    (``event_category`` "gpu_memcpy"/"gpu_memset") unless ``memory_ops=False``.
    """
    with Database(path) as db:
        db.require("rocmProfileData .rpd database", "rocpd_op", "rocpd_string")
        db.require_columns("rocpd_op", ["id", "gpuId", "queueId", "start", "end", "description_id",
                                        "opType_id"], "rocmProfileData .rpd database")
        got, n = int_columns(db, "rocpd_op", {
            "id": "id", "gpu": "gpuId", "queue": "queueId", "start": '"start"', "end": '"end"',
            "desc": "description_id", "type": "opType_id"}, key="id", lenient=("start", "end"))
        if n == 0:
            return empty_frame(TOOL, _EXTRAS)
        real = real_values(got, {"start": "start_ns", "end": "end_ns"})
        string_ids = codes(np.concatenate([got["desc"][0], got["type"][0]]))[0].tolist()
        strings = {}
        for k in range(0, len(string_ids), 900):           # SQLite's bound-parameter limit
            chunk = string_ids[k:k + 900]
            strings.update(db.query(f"SELECT id, string FROM rocpd_string WHERE id IN "
                                    f"({','.join('?' * len(chunk))})", chunk))
        launch = _launches(db) if db.has("rocpd_api_ops", "rocpd_kernelapi") else None
        pids = _pids(db) if db.has("rocpd_api_ops", "rocpd_api") else None

    # Classify each distinct (op type, description) pair once.
    types, t_codes = codes(got["type"][0])
    descs, d_codes = codes(got["desc"][0])
    uniq, inverse = codes(t_codes.astype(np.int64) * len(descs) + d_codes)
    klass, name = [], []
    for p in uniq.tolist():
        t, d = divmod(p, len(descs))
        c, nm = _op_class(strings.get(int(types[t])), strings.get(int(descs[d])))
        klass.append(c)
        name.append(nm)
    klass = np.array(klass, dtype=object)[inverse]
    keep = klass != None                                           # noqa: E711 (object array)
    if not memory_ops:
        keep &= klass == "kernel"
    idx = np.flatnonzero(keep)
    m = len(idx)
    names = np.array(name, dtype=object)[inverse][idx]
    op_ids = got["id"][0][idx]
    cols = {
        "kernel_name": names,
        "start_ns": int_array((got["start"][0][idx], got["start"][1][idx])),
        "end_ns": int_array((got["end"][0][idx], got["end"][1][idx])),
        "device": spread(got["gpu"][0][idx], {g: str(g) for g in codes(got["gpu"][0])[0].tolist()}),
        "stream": spread(got["queue"][0][idx], {q: str(q) for q in codes(got["queue"][0])[0].tolist()}),
    }
    extras = {"queue_id": cols["stream"].copy(),
              "op_type": spread(got["type"][0][idx], {k: strings.get(k) for k in types.tolist()}),
              "event_category": klass[idx].astype(object)}
    blank = pd.arrays.IntegerArray(np.zeros(m, dtype=np.int64), np.ones(m, dtype=bool))
    if launch is not None:
        pos, found = _align(launch["op"], op_ids)
        for src, dst in (("wx", "block_x"), ("wy", "block_y"), ("wz", "block_z"),
                         ("lds", "shared_mem_bytes")):
            cols[dst] = _take(launch[src], pos, found)
        for axis in "xyz":
            extras[f"rpd_grid_{axis}"] = _take(launch[f"g{axis}"], pos, found)
        scratch = _take(launch["scratch"], pos, found)
        extras["scratch_bytes"] = scratch.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        for axis in "xyz":
            extras[f"rpd_grid_{axis}"] = blank.copy()
        extras["scratch_bytes"] = np.full(m, np.nan)
    if pids is not None:
        pos, found = _align(pids["op"], op_ids)
        cols["pid"] = _take(pids["pid"], pos, found)
        cols["correlation_id"] = _take(pids["api"], pos, found)
    # Real-number timestamps of the ops kept here: positions in rocpd_op -> positions here.
    bad = {}
    for col, rows in real.items():
        at = np.searchsorted(idx, np.fromiter(rows, dtype=np.int64))
        hit = {int(a): rows[r] for a, r in zip(at.tolist(), rows) if a < m and idx[a] == r}
        if hit:
            bad[col] = hit
    origin = Origin(path, "rocpd_op id {}", lambda rows: op_ids[rows].tolist())
    return schema_frame(cols, m, TOOL, extras, origin=origin, bad=bad)


def _launches(db):
    got, _ = int_columns(db, "rocpd_api_ops AO JOIN rocpd_kernelapi K ON K.api_ptr_id = AO.api_id", {
        "op": "AO.op_id", "gx": "K.gridX", "gy": "K.gridY", "gz": "K.gridZ", "wx": "K.workgroupX",
        "wy": "K.workgroupY", "wz": "K.workgroupZ", "lds": "K.groupSegmentSize",
        "scratch": "K.privateSegmentSize"}, key="AO.id")
    return got


def _pids(db):
    got, _ = int_columns(db, "rocpd_api_ops AO JOIN rocpd_api A ON A.id = AO.api_id", {
        "op": "AO.op_id", "pid": "A.pid", "api": "AO.api_id"}, key="AO.id")
    return got


def _align(keys, wanted):
    """Positions of ``wanted`` op ids in ``keys`` (first match) and whether each was found."""
    values = keys[0]
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    pos = np.searchsorted(sorted_values, wanted)
    pos = np.minimum(pos, max(len(sorted_values) - 1, 0))
    found = (sorted_values[pos] == wanted) if len(sorted_values) else np.zeros(len(wanted), dtype=bool)
    return (order[pos] if len(order) else pos), found


def _take(pair, pos, found):
    values, mask = pair
    if len(values) == 0:
        return pd.arrays.IntegerArray(np.zeros(len(pos), dtype=np.int64), np.ones(len(pos), dtype=bool))
    return pd.arrays.IntegerArray(values[pos].astype(np.int64), mask[pos] | ~found)
