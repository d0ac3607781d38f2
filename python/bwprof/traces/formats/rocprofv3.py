"""rocprofv3: kernel_trace.csv, counter_collection.csv, kernel_stats.csv and agent_info.csv."""

import re

import numpy as np
import pandas as pd

from ..table import _ceil_div, _frame, _read_csv, _Table, _text
from ..units import parse_number
from .rocprof import _read_kernel_stats

_V3_TRACE_REQUIRED = [("Kernel_Name",), ("Start_Timestamp",), ("End_Timestamp",)]


def _rocprofv3_columns(t):
    """Schema columns shared by rocprofv3's kernel_trace and counter_collection files."""
    cols = {"kernel_name": t.col("Kernel_Name")}
    if t.has("Start_Timestamp"):
        cols["start_ns"] = t.ints("Start_Timestamp")
        cols["end_ns"] = t.ints("End_Timestamp")
    if t.has("Grid_Size_X"):
        for axis in "xyz":
            cols[f"grid_{axis}"] = _ceil_div(t.numbers(f"Grid_Size_{axis.upper()}"),
                                             t.numbers(f"Workgroup_Size_{axis.upper()}"))
            cols[f"block_{axis}"] = t.numbers(f"Workgroup_Size_{axis.upper()}")
    elif t.has("Grid_Size"):
        # Only totals: the whole launch is described as one-dimensional.
        cols["grid_x"] = _ceil_div(t.numbers("Grid_Size"), t.numbers("Workgroup_Size"))
        cols["block_x"] = t.numbers("Workgroup_Size")
        cols["grid_y"] = cols["grid_z"] = cols["block_y"] = cols["block_z"] = [1] * len(t.rows)
    vgpr = t.numbers("VGPR_Count", "Vgpr_Count", "Arch_VGPR_Count")
    if vgpr is not None:
        agpr = t.numbers("Accum_VGPR_Count")
        # AGPRs are per-lane registers too; MI-series kernels often hold the matrix tile there.
        cols["registers"] = vgpr + (np.nan_to_num(agpr) if agpr is not None else 0)
    cols["shared_mem_bytes"] = t.numbers("LDS_Block_Size", "Lds_Block_Size", "Group_Segment_Size",
                                         "LDS_Size")
    cols["device"] = _text(t.col("Agent_Id"))
    cols["stream"] = _text(t.col("Stream_Id", "Queue_Id"))
    cols["correlation_id"] = t.ints("Correlation_Id")
    cols["pid"] = t.ints("Process_Id")
    extras = {}
    if t.has("Dispatch_Id"):
        extras["dispatch_id"] = t.ints("Dispatch_Id")
    if t.has("Queue_Id"):
        extras["queue_id"] = _text(t.col("Queue_Id"))
    if t.has("SGPR_Count", "Sgpr_Count"):
        extras["sgpr"] = t.numbers("SGPR_Count", "Sgpr_Count")
    if t.has("Scratch_Size", "Private_Segment_Size"):
        extras["scratch_bytes"] = t.numbers("Scratch_Size", "Private_Segment_Size")
    return cols, extras


def read_rocprofv3_kernel_trace(path):
    """rocprofv3 ``kernel_trace.csv`` (any header generation) -> one row per dispatch."""
    t = _read_csv(path, _V3_TRACE_REQUIRED, what="a rocprofv3 kernel_trace.csv")
    cols, extras = _rocprofv3_columns(t)
    return _frame(cols, len(t.rows), "rocprofv3", extras)


def read_rocprofv3_counter_collection(path):
    """rocprofv3 ``counter_collection.csv`` (long: one row per counter) -> one row per dispatch.

    Counter values become columns named after the counter; a counter listed twice for one
    dispatch (per-XCC or per-dimension rows) is summed. Units stay as rocprofv3 reports them
    (FETCH_SIZE and WRITE_SIZE are kilobytes); join_counters() converts those to bytes.
    """
    t = _read_csv(path, [("Kernel_Name",), ("Counter_Name",), ("Counter_Value",)],
                  what="a rocprofv3 counter_collection.csv")
    if t.has("Dispatch_Id"):
        keys = t.col("Dispatch_Id")
    elif t.has("Correlation_Id"):
        keys = t.col("Correlation_Id")
    else:
        starts = t.col("Start_Timestamp") or [""] * len(t.rows)
        keys = [f"{n}@{s}" for n, s in zip(t.col("Kernel_Name"), starts)]
    names = t.col("Counter_Name")
    values = t.numbers("Counter_Value")
    first_row, counters, order = {}, {}, []
    for i, key in enumerate(keys):
        if key not in first_row:
            first_row[key] = i
            order.append(key)
            counters[key] = {}
        c = counters[key]
        name = names[i].strip()
        c[name] = c.get(name, 0.0) + values[i]
    picked = [first_row[k] for k in order]
    sub = _Table(t.path, t.header, t.header_line, [t.rows[i] for i in picked],
                 [t.lines[i] for i in picked])
    cols, extras = _rocprofv3_columns(sub)
    counter_names = list(dict.fromkeys(n.strip() for n in names))
    for name in counter_names:
        extras[name] = np.array([counters[k].get(name, np.nan) for k in order], dtype="float64")
    return _frame(cols, len(order), "rocprofv3", extras)


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
        raw = t.col(name)
        values = [parse_number(x) for x in raw]
        data[key] = values if all(v is not None for v in values) else raw
    return pd.DataFrame(data)
