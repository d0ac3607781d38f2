"""rocprofv3: kernel_trace.csv, counter_collection.csv, kernel_stats.csv and agent_info.csv."""

import re

import numpy as np
import pandas as pd

from ..csv_columns import _ceil_div
from ..csv_table import _read_csv
from ..table import reader, schema_frame
from ..units import parse_number
from .rocprof import _read_kernel_stats

_V3_TRACE_REQUIRED = [("Kernel_Name",), ("Start_Timestamp",), ("End_Timestamp",)]

# The columns the readers use, with their types: parsed typed in one pass (table._read_csv).
# Sizes and counts are integers in every rocprofv3 version.
_V3_KINDS = {
    "Kernel_Name": "text", "Agent_Id": "text", "Stream_Id": "text", "Queue_Id": "text",
    "Start_Timestamp": "int", "End_Timestamp": "int", "Correlation_Id": "int",
    "Process_Id": "int", "Dispatch_Id": "int",
    "Grid_Size_X": "int", "Grid_Size_Y": "int", "Grid_Size_Z": "int",
    "Workgroup_Size_X": "int", "Workgroup_Size_Y": "int", "Workgroup_Size_Z": "int",
    "Grid_Size": "int", "Workgroup_Size": "int",
    "VGPR_Count": "int", "Vgpr_Count": "int", "Arch_VGPR_Count": "int",
    "Accum_VGPR_Count": "int", "LDS_Block_Size": "int", "Lds_Block_Size": "int",
    "Group_Segment_Size": "int", "LDS_Size": "int", "SGPR_Count": "float",
    "Sgpr_Count": "float", "Scratch_Size": "float", "Private_Segment_Size": "float",
}


def _rocprofv3_columns(t):
    """Schema columns shared by rocprofv3's kernel_trace and counter_collection files."""
    codes, uniques = t.categorical("Kernel_Name")
    cols = {"kernel_name": pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))}
    if t.has("Start_Timestamp"):
        cols["start_ns"] = t.ints("Start_Timestamp")
        cols["end_ns"] = t.ints("End_Timestamp")
    if t.has("Grid_Size_X"):
        for axis in "xyz":
            cols[f"grid_{axis}"] = _ceil_div(t.ints(f"Grid_Size_{axis.upper()}"),
                                             t.ints(f"Workgroup_Size_{axis.upper()}"))
            cols[f"block_{axis}"] = t.ints(f"Workgroup_Size_{axis.upper()}")
    elif t.has("Grid_Size"):
        # Only totals: the whole launch is described as one-dimensional.
        cols["grid_x"] = _ceil_div(t.ints("Grid_Size"), t.ints("Workgroup_Size"))
        cols["block_x"] = t.ints("Workgroup_Size")
        cols["grid_y"] = cols["grid_z"] = cols["block_y"] = cols["block_z"] = np.ones(t.n, dtype=np.int64)
    vgpr = t.ints("VGPR_Count", "Vgpr_Count", "Arch_VGPR_Count")
    if vgpr is not None:
        agpr = t.ints("Accum_VGPR_Count")
        # AGPRs are per-lane registers too; MI-series kernels often hold the matrix tile there.
        cols["registers"] = _plus(vgpr, agpr)
    cols["shared_mem_bytes"] = t.ints("LDS_Block_Size", "Lds_Block_Size", "Group_Segment_Size",
                                      "LDS_Size")
    cols["device"] = t.labels("Agent_Id")
    cols["stream"] = t.labels("Stream_Id", "Queue_Id")
    cols["correlation_id"] = t.ints("Correlation_Id")
    cols["pid"] = t.ints("Process_Id")
    extras = {}
    if t.has("Dispatch_Id"):
        extras["dispatch_id"] = t.ints("Dispatch_Id")
    if t.has("Queue_Id"):
        extras["queue_id"] = t.labels("Queue_Id")
    if t.has("SGPR_Count", "Sgpr_Count"):
        extras["sgpr"] = t.numbers("SGPR_Count", "Sgpr_Count")
    if t.has("Scratch_Size", "Private_Segment_Size"):
        extras["scratch_bytes"] = t.numbers("Scratch_Size", "Private_Segment_Size")
    return cols, extras


def _plus(a, b):
    """a + b (b's blanks count as 0), integers where both columns are."""
    if b is None:
        return a
    if isinstance(a, pd.arrays.IntegerArray) and isinstance(b, pd.arrays.IntegerArray):
        return pd.arrays.IntegerArray(a._data + np.where(b._mask, 0, b._data), a._mask.copy())
    a = pd.array(a, dtype="Float64").to_numpy(dtype=np.float64, na_value=np.nan) \
        if not isinstance(a, np.ndarray) else a.astype(np.float64)
    b = pd.array(b, dtype="Float64").to_numpy(dtype=np.float64, na_value=np.nan) \
        if not isinstance(b, np.ndarray) else b.astype(np.float64)
    return a + np.nan_to_num(b)


@reader
def read_rocprofv3_kernel_trace(path):
    """rocprofv3 ``kernel_trace.csv`` (any header generation) -> one row per dispatch."""
    t = _read_csv(path, _V3_TRACE_REQUIRED, what="a rocprofv3 kernel_trace.csv", kinds=_V3_KINDS)
    cols, extras = _rocprofv3_columns(t)
    return schema_frame(cols, t.n, "rocprofv3", extras, origin=t.origin(), int_extras=("dispatch_id",))


@reader
def read_rocprofv3_counter_collection(path):
    """rocprofv3 ``counter_collection.csv`` (long: one row per counter) -> one row per dispatch.

    Counter values become columns named after the counter; a counter listed twice for one
    dispatch (per-XCC or per-dimension rows) is summed. Units stay as rocprofv3 reports them
    (FETCH_SIZE and WRITE_SIZE are kilobytes); join_counters() converts those to bytes.
    """
    kinds = dict(_V3_KINDS, Counter_Name="text", Counter_Value="float")
    t = _read_csv(path, [("Kernel_Name",), ("Counter_Name",), ("Counter_Value",)],
                  what="a rocprofv3 counter_collection.csv", kinds=kinds)
    # One dispatch: a Dispatch_Id, else a Correlation_Id, else a kernel name and start time.
    if t.has("Dispatch_Id", "Correlation_Id"):
        keys = t.ints("Dispatch_Id") if t.has("Dispatch_Id") else t.ints("Correlation_Id")
        keys = pd.Series(keys, dtype=object) if not isinstance(keys, pd.arrays.IntegerArray) else keys
    else:
        starts = t.col("Start_Timestamp") if t.has("Start_Timestamp") else np.full(t.n, "", dtype=object)
        keys = pd.Series(t.col("Kernel_Name"), dtype=object) + "@" + pd.Series(starts, dtype=object)
    key_codes, _ = pd.factorize(keys, use_na_sentinel=False)
    key_codes = np.asarray(key_codes, dtype=np.int64)
    name_codes, names = t.categorical("Counter_Name")
    names = [n.strip() for n in names]
    # Counters named alike after stripping count as one.
    counter_names = list(dict.fromkeys(names))
    slot = np.array([counter_names.index(n) for n in names] + [-1], dtype=np.int64)
    which = slot[np.where(name_codes < 0, len(names), name_codes)]
    values = t.numbers("Counter_Value")
    n_keys = int(key_codes.max()) + 1 if len(key_codes) else 0
    # The first row of each dispatch, in the order dispatches first appear (factorize numbers
    # them in that order).
    first_row = np.unique(key_codes, return_index=True)[1]
    sub = t.take(first_row)
    cols, extras = _rocprofv3_columns(sub)
    for c, name in enumerate(counter_names):
        rows = which == c
        sums = np.zeros(n_keys)
        seen = np.zeros(n_keys, dtype=bool)
        np.add.at(sums, key_codes[rows], values[rows])
        seen[key_codes[rows]] = True
        sums[~seen] = np.nan
        extras[name] = sums
    return schema_frame(cols, n_keys, "rocprofv3", extras, origin=sub.origin(),
                        int_extras=("dispatch_id",))


@reader
def read_rocprofv3_kernel_stats(path):
    """rocprofv3 ``kernel_stats.csv`` -> one row per kernel (calls, total duration_ns)."""
    return _read_kernel_stats(path, "a rocprofv3 kernel_stats.csv")


def read_agent_info(path):
    """rocprofv3 ``agent_info.csv`` -> one row per agent, snake_case columns, numbers as numbers.

    Not a kernel trace: it says which device an ``Agent_Id``/``Node_Id`` is (``cu_count``,
    ``wave_front_size``, ``product_name`` ...), e.g. for findings(cu_count=...).
    """
    t = _read_csv(path, [("Node_Id",), ("Agent_Type",)], what="a rocprofv3 agent_info.csv")
    data = {}
    for name in t.header:
        if not name:
            continue
        key = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
        raw = list(t.col(name))
        values = [parse_number(x) for x in raw]
        data[key] = values if all(v is not None for v in values) else raw
    return pd.DataFrame(data)
