"""rocprofiler-sdk's rocpd SQLite database: what ``rocprofv3`` writes by default since ROCm 7
(``<host>/<pid>_results.db``), schema_version 3.

Kernel dispatches are read through the database's ``kernels`` view (the interface
rocprofiler-sdk documents; its base tables carry a per-session ``_<uuid>`` suffix and have
changed layout within version 3), counters from ``rocpd_pmc_event``/``rocpd_info_pmc``, copies
from the ``memory_copies`` view, devices from ``rocpd_info_agent``.

Grid sizes: the view's ``grid_x`` is the dispatch table's ``grid_size_x`` under another name;
both hold the AQL packet's grid size, which counts work-items (rocprofv3's CSV writes the same
number as ``Grid_Size_X``). The schema's ``grid_x`` counts work-groups (blocks), so it is
``ceil(grid_x / workgroup_x)``, exactly as the rocprofv3 CSV reader converts.
"""

import json

import numpy as np
import pandas as pd

from ..errors import TraceFormatError
from ..names import short_kernel_name
from ..sqlitedb import (Database, Origin, codes, empty_frame, float_array, int_array, int_columns,
                        real_values, schema_frame, spread)
from ..table import reader
from ..sqlitedb import labels as _labels

SUPPORTED_MAJOR = 3
TOOL = "rocprofv3"
_EXTRAS = ("dispatch_id", "queue_id", "tid", "sgpr", "scratch_bytes", "event_category")


def _pick(cols, *names):
    """The first of ``names`` that the view has (rocpd renamed a few columns within v3)."""
    for n in names:
        if n in cols:
            return n
    return None


def _check(db):
    """Refuse what is not a rocpd v3 database with a reason."""
    if db.has("rocpd_op") and not db.has("rocpd_kernel_dispatch"):
        raise db.fail("this is a rocmProfileData .rpd database (rocpd_op/rocpd_api), not "
                      "rocprofiler-sdk's rocpd; read it with read_rpd()")
    db.require("rocpd database", "rocpd_metadata")
    row = db.one("SELECT value FROM rocpd_metadata WHERE tag = 'schema_version'")
    if row is None:
        raise db.fail("rocpd database without a schema_version in rocpd_metadata")
    version = str(row[0]).strip()
    try:
        major = int(version.split(".")[0])
    except ValueError:
        raise db.fail(f"rocpd schema_version {version!r} is not a version number") from None
    if major != SUPPORTED_MAJOR:
        raise db.fail(f"rocpd schema_version {version}: bwprof reads schema version "
                      f"{SUPPORTED_MAJOR} (ROCm 7 rocprofv3); convert it with that rocprofv3's "
                      "rocpd2csv or a matching bwprof")
    db.require("rocpd database", "kernels", "rocpd_info_agent", "rocpd_info_kernel_symbol")
    return version


def _guids(db):
    """The sessions in the database; [None] for one (no per-row guid test is needed then)."""
    rows = db.query("SELECT DISTINCT guid FROM rocpd_info_kernel_symbol")
    return [r[0] for r in rows] if len(rows) > 1 else [None]


def _agents(db, guid):
    """{absolute_index: ("GPU 0", product name)} for one session."""
    where, params = ("WHERE guid = ?", (guid,)) if guid is not None else ("", ())
    out = {}
    for abs_index, kind, type_index, product in db.query(
            f"SELECT absolute_index, type, type_index, product_name FROM rocpd_info_agent {where}",
            params):
        if abs_index is not None and abs_index not in out:
            out[abs_index] = (f"{kind or 'Agent'} {type_index if type_index is not None else abs_index}",
                              product)
    return out


def _symbols(db, guid):
    """{symbol id: (name, vgpr + agpr, sgpr)}; the name as rocprofv3 prints it (display_name)."""
    where, params = ("WHERE guid = ?", (guid,)) if guid is not None else ("", ())
    out = {}
    for sid, display, name, vgpr, agpr, sgpr in db.query(
            "SELECT id, display_name, kernel_name, arch_vgpr_count, accum_vgpr_count, sgpr_count "
            f"FROM rocpd_info_kernel_symbol {where}", params):
        label = display if display else (name or f"kernel {sid}")
        regs = None if vgpr is None else vgpr + (agpr or 0)
        out[sid] = (label, regs, sgpr)
    return out


def _blocks(items, group):
    """Work-groups from work-items (ceil), NA where the work-group size is 0 or unknown."""
    (n, n_mask), (g, g_mask) = items, group
    ok = (g > 0) & ~n_mask & ~g_mask
    out = np.zeros(len(n), dtype=np.int64)
    np.floor_divide(n + g - 1, np.where(ok, g, 1), out=out, where=ok)
    return pd.arrays.IntegerArray(out, ~ok)


def _dispatches(db, guid, with_counters=True):
    cols = {c.lower() for c in db.columns("kernels")}
    need = ["id", "kernel_id", "dispatch_id", "start", "end", "grid_x", "grid_y", "grid_z",
            "workgroup_x", "workgroup_y", "workgroup_z"]
    missing = [c for c in need if c not in cols]
    if missing:
        raise db.fail(f"rocpd kernels view lacks column(s) {', '.join(missing)}")
    exprs = {c: f'"{c}"' for c in need}
    optional = {
        "pid": ("pid",), "tid": ("tid",), "queue_id": ("queue_id",), "stream_id": ("stream_id",),
        "lds": ("lds_size",), "scratch": ("scratch_size",),
        "agent": ("agent_abs_index", "agent_absolute_index"),
        # The internal correlation id: rocpd's event stack_id (the CSV's Correlation_Id).
        "corr": ("stack_id", "corr_id", "correlation_id"),
    }
    for key, names in optional.items():
        col = _pick(cols, *names)
        if col:
            exprs[key] = f'"{col}"'
    where, params = ("guid = ?", (guid,)) if guid is not None else ("", ())
    bounds = None
    if db.has("rocpd_kernel_dispatch"):
        bounds = db.one(f"SELECT min(id), max(id) FROM rocpd_kernel_dispatch "
                        f"{'WHERE ' + where if where else ''}", params)
    got, n = int_columns(db, "kernels", exprs, key='"id"', where=where, params=params, bounds=bounds,
                         lenient=("start", "end"))
    if n == 0:
        return None
    bad = real_values(got, {"start": "start_ns", "end": "end_ns"})
    symbols = _symbols(db, guid)
    agents = _agents(db, guid)
    kernel = got["kernel_id"][0]
    unknown = sorted(set(codes(kernel)[0].tolist()) - set(symbols))
    if unknown:
        raise db.fail(f"kernel dispatches refer to kernel symbol id(s) {unknown[:5]} that "
                      "rocpd_info_kernel_symbol does not hold (truncated database?)")
    uniq, inverse = codes(kernel)
    per_kernel = [symbols[k] for k in uniq.tolist()]
    names = np.array([v[0] for v in per_kernel], dtype=object)[inverse]
    shorts = np.array([short_kernel_name(v[0]) for v in per_kernel], dtype=object)[inverse]
    regs = _int_lookup([v[1] for v in per_kernel], inverse)
    sgpr = np.array([np.nan if v[2] is None else v[2] for v in per_kernel], dtype=np.float64)[inverse]
    cols_out = {
        "kernel_name": names,
        "short_name": shorts,
        "start_ns": int_array(got["start"]),
        "end_ns": int_array(got["end"]),
        "grid_x": _blocks(got["grid_x"], got["workgroup_x"]),
        "grid_y": _blocks(got["grid_y"], got["workgroup_y"]),
        "grid_z": _blocks(got["grid_z"], got["workgroup_z"]),
        "block_x": int_array(got["workgroup_x"]),
        "block_y": int_array(got["workgroup_y"]),
        "block_z": int_array(got["workgroup_z"]),
        "registers": regs,
    }
    if "lds" in got:
        cols_out["shared_mem_bytes"] = int_array(got["lds"])
    if "agent" in got:
        cols_out["device"] = spread(got["agent"][0], {k: v[0] for k, v in agents.items()})
    if "stream_id" in got:
        cols_out["stream"] = _labels(got["stream_id"])
    if "corr" in got:
        cols_out["correlation_id"] = int_array(got["corr"])
    if "pid" in got:
        cols_out["pid"] = int_array(got["pid"])
    extras = {"dispatch_id": int_array(got["dispatch_id"])}
    extras["queue_id"] = _labels(got["queue_id"]) if "queue_id" in got else np.full(n, None, dtype=object)
    extras["tid"] = int_array(got["tid"]) if "tid" in got else pd.array([pd.NA] * n, dtype="Int64")
    extras["sgpr"] = sgpr
    extras["scratch_bytes"] = float_array(got["scratch"]) if "scratch" in got else np.full(n, np.nan)
    extras["event_category"] = np.full(n, "kernel", dtype=object)
    ids = got["id"][0]
    if with_counters:
        extras.update(_counters(db, guid, ids))
    origin = Origin(db.path, "kernels id {}", lambda rows: ids[rows].tolist())
    return schema_frame(cols_out, n, TOOL, extras, origin=origin, bad=bad)


def _int_lookup(values, inverse):
    """Int64 array ``values[inverse]`` where ``values`` may hold None."""
    mask = np.array([v is None for v in values], dtype=bool)
    data = np.array([0 if v is None else int(v) for v in values], dtype=np.int64)
    return pd.arrays.IntegerArray(data[inverse], mask[inverse])


def _counters(db, guid, dispatch_rows):
    """{counter name: float array aligned with ``dispatch_rows``} (instances summed)."""
    if not db.has("rocpd_pmc_event", "rocpd_info_pmc", "rocpd_kernel_dispatch"):
        return {}
    g = "AND E.guid = ?" if guid is not None else ""
    params = (guid,) if guid is not None else ()
    rows = db.query(
        "SELECT K.id, I.name, SUM(E.value) FROM rocpd_pmc_event E "
        "JOIN rocpd_info_pmc I ON I.id = E.pmc_id AND I.guid = E.guid "
        "JOIN rocpd_kernel_dispatch K ON K.event_id = E.event_id AND K.guid = E.guid "
        f"WHERE 1 {g} GROUP BY K.id, I.name", params)
    if not rows:
        return {}
    order = np.argsort(dispatch_rows, kind="stable")
    sorted_rows = dispatch_rows[order]
    out = {}
    for row_id, name, value in rows:
        col = out.setdefault(str(name), np.full(len(dispatch_rows), np.nan))
        pos = np.searchsorted(sorted_rows, row_id)
        if pos < len(sorted_rows) and sorted_rows[pos] == row_id:
            col[order[pos]] = float(value) if value is not None else np.nan
    return out


_DIRECTIONS = {"HOST": "Host", "DEVICE": "Device", "PEER": "Peer"}


def copy_name(op):
    """rocprofiler-sdk's "MEMORY_COPY_HOST_TO_DEVICE" -> "[memcpy Host-to-Device]"."""
    text = str(op or "").upper()
    if text.startswith("MEMORY_COPY_"):
        text = text[len("MEMORY_COPY_"):]
    if "_TO_" in text:
        src, dst = text.split("_TO_", 1)
        return f"[memcpy {_DIRECTIONS.get(src, src.title())}-to-{_DIRECTIONS.get(dst, dst.title())}]"
    return f"[memcpy {text.title() or 'Unknown'}]"


def _copies(db, guid):
    if not db.has("memory_copies"):
        return None
    cols = {c.lower() for c in db.columns("memory_copies")}
    corr = _pick(cols, "stack_id", "corr_id", "correlation_id")
    need = ["start", "end", "name", "size", "pid", "dst_agent_type", "dst_agent_type_index",
            "src_agent_type", "src_agent_type_index"]
    if any(c not in cols for c in need):
        raise db.fail("rocpd memory_copies view lacks the columns start, end, name, size, pid "
                      "and the agents' type and type index")
    where, params = ("WHERE guid = ?", (guid,)) if guid is not None else ("", ())
    tid = "tid" if "tid" in cols else "NULL"
    stream = "stream_id" if "stream_id" in cols else "NULL"
    queue = "queue_id" if "queue_id" in cols else "NULL"
    rows = db.query(
        f'SELECT "start", "end", name, size, pid, {tid}, {stream}, {queue}, dst_agent_type, '
        f"dst_agent_type_index, src_agent_type, src_agent_type_index, {corr or 'NULL'}, id "
        f"FROM memory_copies {where} ORDER BY id", params)
    if not rows:
        return None
    n = len(rows)
    c = list(zip(*rows))
    device = [f"GPU {di}" if dk == "GPU" else (f"GPU {si}" if sk == "GPU" else f"{dk} {di}")
              for dk, di, sk, si in zip(c[8], c[9], c[10], c[11])]
    cols_out = {
        "kernel_name": np.array([copy_name(x) for x in c[2]], dtype=object),
        "start_ns": list(c[0]),
        "end_ns": list(c[1]),
        "device": np.array(device, dtype=object),
        "stream": np.array([None if s is None else str(s) for s in c[6]], dtype=object),
        "correlation_id": pd.array(list(c[12]), dtype="Int64"),
        "pid": pd.array(list(c[4]), dtype="Int64"),
    }
    extras = {"queue_id": np.array([None if q is None else str(q) for q in c[7]], dtype=object),
              "tid": pd.array(list(c[5]), dtype="Int64"),
              "event_category": np.full(n, "gpu_memcpy", dtype=object),
              "bytes": np.array(c[3], dtype=np.float64),
              "copy_kind": np.array([str(x) for x in c[2]], dtype=object)}
    ids = list(c[13])
    origin = Origin(db.path, "memory_copies id {}", lambda picked: [ids[i] for i in picked])
    return schema_frame(cols_out, n, TOOL, extras, origin=origin)


@reader
def read_rocpd(path, memory_copies=True, counters=True):
    """rocprofiler-sdk rocpd database (``rocprofv3`` ROCm 7 default, schema 3) -> one row per
    dispatch, plus one per memory copy (``event_category`` "gpu_memcpy") unless
    ``memory_copies=False``; collected counters become columns (instances summed).
    """
    with Database(path) as db:
        _check(db)
        frames = []
        for guid in _guids(db):
            df = _dispatches(db, guid, with_counters=counters)
            if df is not None:
                frames.append(df)
            if memory_copies:
                copies = _copies(db, guid)
                if copies is not None:
                    frames.append(copies)
    if not frames:
        return empty_frame(TOOL, _EXTRAS)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def read_rocpd_agents(path):
    """The devices of a rocpd database, one row per agent (per session): ``device`` ("GPU 0"),
    type, indices, names, and the numbers rocprofiler-sdk stores in ``extdata`` (``cu_count``,
    ``wave_front_size``, ...), e.g. for findings(cu_count=...).
    """
    with Database(path) as db:
        _check(db)
        rows = db.query("SELECT guid, type, absolute_index, logical_index, type_index, name, "
                        "model_name, vendor_name, product_name, extdata FROM rocpd_info_agent "
                        "ORDER BY guid, absolute_index, id")
    seen, records = set(), []
    for guid, kind, abs_i, log_i, type_i, name, model, vendor, product, extdata in rows:
        if (guid, abs_i) in seen:
            continue                    # every process lists the same agents again
        seen.add((guid, abs_i))
        rec = {"device": f"{kind} {type_i}", "type": kind, "absolute_index": abs_i,
               "logical_index": log_i, "type_index": type_i, "name": name, "model_name": model,
               "vendor_name": vendor, "product_name": product}
        try:
            more = json.loads(extdata) if extdata else {}
        except (TypeError, ValueError):
            raise TraceFormatError(path, None, "rocpd_info_agent extdata is not JSON: "
                                               f"{str(extdata)[:60]!r}") from None
        if isinstance(more, dict):
            rec.update({k: v for k, v in more.items()
                        if k not in rec and isinstance(v, (int, float, str)) and not isinstance(v, bool)})
        records.append(rec)
    return pd.DataFrame(records)
