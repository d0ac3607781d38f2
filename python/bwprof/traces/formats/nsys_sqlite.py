"""Nsight Systems SQLite exports (``nsys export --type sqlite``) and ``.nsys-rep`` reports.

Kernels come from ``CUPTI_ACTIVITY_KIND_KERNEL`` (names through ``StringIds``), copies and
fills from ``CUPTI_ACTIVITY_KIND_MEMCPY``/``_MEMSET``, GPU names from ``TARGET_INFO_GPU``.
Kernels replayed from a CUDA graph are ordinary rows of the kernel table (``graphNodeId`` set)
and are kept; ``graph_node_id`` says which they are. ``globalPid`` holds the process id in
bits 24-47 (the Nsight Systems documentation's serialized GlobalId).

A ``.nsys-rep`` is exported first with ``nsys export`` (nsys must be on PATH), unless a
``.sqlite`` of the same name beside it is newer than the report.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import TraceFormatError
from ..sqlitedb import (Database, Origin, codes, empty_frame, float_array, int_array, int_columns,
                        real_values, schema_frame, spread)
from ..table import reader
from ..sqlitedb import labels as _labels

TOOL = "nsys"
SUPPORTED_MAJOR = 3
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
_EXTRAS = ("context_id", "graph_node_id", "graph_id", "device_name", "event_category")

# CUPTI's CUpti_ActivityMemcpyKind, used when the export has no ENUM_CUDA_MEMCPY_OPER table.
COPY_KINDS = {0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
              4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array",
              8: "Device-to-Device", 9: "Host-to-Host", 10: "Peer-to-Peer"}


def pid_of(global_pid):
    """Process ids from Nsight Systems' serialized globalPid/globalTid values."""
    return (np.asarray(global_pid, dtype=np.int64) >> 24) & 0xFFFFFF


def _check(db):
    if db.has("META_DATA_EXPORT"):
        row = db.one("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'")
        if row is not None and row[0] is not None:
            version = str(row[0]).strip()
            try:
                major = int(version.split(".")[0])
            except ValueError:
                raise db.fail(f"Nsight Systems export schema version {version!r} is not a version") from None
            if major != SUPPORTED_MAJOR:
                raise db.fail(f"Nsight Systems export schema version {version}: bwprof reads major "
                              f"version {SUPPORTED_MAJOR} (Nsight Systems 2022 and later); a new major "
                              "version renames tables and columns")
    if not any(db.has(t) for t in (KERNELS, MEMCPY, MEMSET)):
        raise db.fail("Nsight Systems export without CUDA GPU activity (no CUPTI_ACTIVITY_KIND_KERNEL,"
                      " _MEMCPY or _MEMSET table): profile with nsys profile --trace cuda")
    db.require("Nsight Systems export", "StringIds")


def _gpu_names(db):
    if not db.has("TARGET_INFO_GPU"):
        return {}
    cols = {c.lower() for c in db.columns("TARGET_INFO_GPU")}
    key = "cuDevice" if "cudevice" in cols else "id"
    if "name" not in cols:
        return {}
    return {d: n for d, n in db.query(f"SELECT {key}, name FROM TARGET_INFO_GPU") if d is not None}


def _common(db, got, n, names, gpu):
    """Schema columns every activity table shares."""
    cols = {
        "kernel_name": names,
        "start_ns": int_array(got["start"]),
        "end_ns": int_array(got["end"]),
        "device": _labels(got["deviceId"]),
        "stream": _labels(got["streamId"]) if "streamId" in got else np.full(n, None, dtype=object),
    }
    if "correlationId" in got:
        cols["correlation_id"] = int_array(got["correlationId"])
    if "globalPid" in got:
        values, mask = got["globalPid"]
        cols["pid"] = pd.arrays.IntegerArray(pid_of(values), mask.copy())
    extras = {
        "context_id": int_array(got["contextId"]) if "contextId" in got else _na(n),
        "graph_node_id": int_array(got["graphNodeId"]) if "graphNodeId" in got else _na(n),
        "graph_id": int_array(got["graphId"]) if "graphId" in got else _na(n),
        "device_name": spread(got["deviceId"][0], gpu),
    }
    return cols, extras


def _na(n):
    return pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))


def _optional(db, table, wanted):
    have = {c.lower(): c for c in db.columns(table)}
    return {name: f'"{have[name.lower()]}"' for name in wanted if name.lower() in have}


def _kernels(db, gpu):
    need = ["start", "end", "deviceId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"]
    db.require_columns(KERNELS, need, "Nsight Systems kernel table")
    exprs = {c: f'"{c}"' for c in need}
    name_col = next((c for c in ("demangledName", "shortName", "mangledName")
                     if c.lower() in {x.lower() for x in db.columns(KERNELS)}), None)
    if name_col is None:
        raise db.fail(f"{KERNELS} has no demangledName/shortName column")
    exprs["name"] = f'"{name_col}"'
    exprs.update(_optional(db, KERNELS, ["streamId", "correlationId", "globalPid", "contextId",
                                         "registersPerThread", "staticSharedMemory",
                                         "dynamicSharedMemory", "localMemoryPerThread",
                                         "graphNodeId", "graphId"]))
    exprs["_rowid"] = "rowid"
    got, n = int_columns(db, KERNELS, exprs, key="rowid", lenient=("start", "end"))
    if n == 0:
        return None
    bad = real_values(got, {"start": "start_ns", "end": "end_ns"})
    ids = codes(got["name"][0])[0].tolist()
    table = dict(db.query(f"SELECT id, value FROM StringIds WHERE id IN ({','.join(map(str, ids))})"))
    missing = [i for i in ids if i not in table]
    if missing:
        raise db.fail(f"kernel name id(s) {missing[:5]} are not in StringIds (truncated export?)")
    names = spread(got["name"][0], table)
    cols, extras = _common(db, got, n, names, gpu)
    for axis in "XYZ":
        cols[f"grid_{axis.lower()}"] = int_array(got[f"grid{axis}"])
        cols[f"block_{axis.lower()}"] = int_array(got[f"block{axis}"])
    if "registersPerThread" in got:
        cols["registers"] = int_array(got["registersPerThread"])
    if "staticSharedMemory" in got and "dynamicSharedMemory" in got:
        s, sm = got["staticSharedMemory"]
        d, dm = got["dynamicSharedMemory"]
        cols["shared_mem_bytes"] = pd.arrays.IntegerArray(s + d, sm | dm)
    if "localMemoryPerThread" in got:
        extras["local_mem_per_thread"] = float_array(got["localMemoryPerThread"])
    extras["event_category"] = np.full(n, "kernel", dtype=object)
    return schema_frame(cols, n, TOOL, extras, origin=_origin(db, KERNELS, got), bad=bad)


def _origin(db, table, got):
    rowids = got["_rowid"][0]
    return Origin(db.path, f"{table} rowid {{}}", lambda rows: rowids[rows].tolist())


def _copy_labels(db):
    labels = dict(COPY_KINDS)
    if db.has("ENUM_CUDA_MEMCPY_OPER"):
        cols = {c.lower() for c in db.columns("ENUM_CUDA_MEMCPY_OPER")}
        text = "label" if "label" in cols else ("name" if "name" in cols else None)
        if text:
            labels.update({k: v for k, v in db.query(f"SELECT id, {text} FROM ENUM_CUDA_MEMCPY_OPER")
                           if v})
    return labels


def _transfers(db, table, gpu):
    need = ["start", "end", "deviceId", "bytes"]
    db.require_columns(table, need, f"Nsight Systems {table}")
    exprs = {c: f'"{c}"' for c in need}
    exprs.update(_optional(db, table, ["streamId", "correlationId", "globalPid", "contextId",
                                       "graphNodeId", "copyKind"]))
    exprs["_rowid"] = "rowid"
    got, n = int_columns(db, table, exprs, key="rowid", lenient=("start", "end"))
    if n == 0:
        return None
    bad = real_values(got, {"start": "start_ns", "end": "end_ns"})
    if table == MEMCPY:
        labels = _copy_labels(db)
        kinds = got["copyKind"][0] if "copyKind" in got else np.zeros(n, dtype=np.int64)
        kind_text = spread(kinds, {k: labels.get(k, f"kind {k}") for k in codes(kinds)[0].tolist()})
        names = spread(kinds, {k: f"[memcpy {labels.get(k, f'kind {k}')}]"
                               for k in codes(kinds)[0].tolist()})
        category = "gpu_memcpy"
    else:
        names = np.full(n, "[memset]", dtype=object)
        kind_text = np.full(n, "memset", dtype=object)
        category = "gpu_memset"
    cols, extras = _common(db, got, n, names, gpu)
    extras.update({"bytes": float_array(got["bytes"]), "copy_kind": kind_text,
                   "event_category": np.full(n, category, dtype=object)})
    return schema_frame(cols, n, TOOL, extras, origin=_origin(db, table, got), bad=bad)


@reader
def read_nsys_sqlite(path, memory_ops=True):
    """Nsight Systems SQLite export -> one row per kernel (graph-launched ones included), plus
    one per memcpy/memset (``event_category`` "gpu_memcpy"/"gpu_memset") unless
    ``memory_ops=False``.
    """
    with Database(path) as db:
        _check(db)
        gpu = _gpu_names(db)
        frames = []
        if db.has(KERNELS):
            frames.append(_kernels(db, gpu))
        if memory_ops:
            for table in (MEMCPY, MEMSET):
                if db.has(table):
                    frames.append(_transfers(db, table, gpu))
    frames = [f for f in frames if f is not None]
    if not frames:
        return empty_frame(TOOL, _EXTRAS)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def find_nsys():
    """Path of the ``nsys`` executable on PATH, or None."""
    return shutil.which("nsys")


@reader
def read_nsys_rep(path, nsys=None, memory_ops=True):
    """Nsight Systems report (``.nsys-rep``): exported with ``nsys export --type sqlite`` and
    read with read_nsys_sqlite(). A ``.sqlite`` of the same name beside the report that is
    newer than it is read instead (``nsys stats`` leaves one there).
    """
    rep = Path(path)
    if not rep.exists():
        raise FileNotFoundError(f"{rep}: no such file")
    sibling = rep.with_suffix(".sqlite")
    if sibling.exists() and sibling.stat().st_mtime >= rep.stat().st_mtime:
        return read_nsys_sqlite(sibling, memory_ops=memory_ops)
    exe = nsys or find_nsys()
    if exe is None:
        raise TraceFormatError(rep, None, "reading a .nsys-rep needs Nsight Systems' nsys on PATH "
                                          "(it runs nsys export); or export it yourself: nsys export "
                                          f"--type sqlite -o {sibling.name} {rep.name}")
    with tempfile.TemporaryDirectory(prefix="bwprof_nsys_") as tmp:
        out = Path(tmp) / (rep.stem + ".sqlite")
        cmd = [str(exe), "export", "--type", "sqlite", "--force-overwrite", "true", "--output",
               str(out), str(rep)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            raise TraceFormatError(rep, None, f"cannot run {exe} ({exc})") from None
        if proc.returncode != 0 or not out.exists():
            tail = " ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-2:])
            raise TraceFormatError(rep, None, f"nsys export failed (exit {proc.returncode}): "
                                              f"{tail or 'no output'}")
        return read_nsys_sqlite(out, memory_ops=memory_ops)
