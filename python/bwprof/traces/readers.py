"""Readers for profiler outputs; each returns one DataFrame in the kernel-trace schema.

Every reader parses by column name (tools reorder and rename columns between releases) and
turns malformed input into a TraceFormatError that names the file and the line. Per-dispatch
formats give one row per kernel launch (``calls`` = 1); summary formats (rocprofv3
kernel_stats, rocprof results.stats, nsys cuda_gpu_kern_sum) give one row per kernel with
``calls`` = its launch count and ``duration_ns`` = its total time, so that breakdowns work on
both alike.
"""

import csv
import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import formats as _formats
from .errors import TraceFormatError
from .names import short_kernel_name
from .units import parse_number, to_base, unit_scale

# Column order and dtypes of the kernel-trace schema (docs/traces.md describes each).
SCHEMA = {
    "kernel_name": "object",
    "short_name": "object",
    "start_ns": "Int64",
    "end_ns": "Int64",
    "duration_ns": "float64",
    "calls": "Int64",
    "grid_x": "Int64", "grid_y": "Int64", "grid_z": "Int64",
    "block_x": "Int64", "block_y": "Int64", "block_z": "Int64",
    "registers": "Int64",
    "shared_mem_bytes": "Int64",
    "device": "object",
    "stream": "object",
    "correlation_id": "Int64",
    "source_tool": "object",
    "pid": "Int64",
}
SCHEMA_COLUMNS = list(SCHEMA)

# How far into a file to look for the header line: the ncu and nsys preambles are short.
_HEADER_SCAN_LINES = 200


# --------------------------------------------------------------------------------------------
# Reading text and CSV with line numbers
# --------------------------------------------------------------------------------------------

def _read_text(path):
    """The file's text; binary or undecodable content is a TraceFormatError at its line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise TraceFormatError(path, None, "is a directory, not a profiler output file")
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":                 # PyTorch writes .json.gz traces
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise TraceFormatError(path, None, f"truncated or corrupt gzip data ({exc})") from None
    if not data.strip():
        raise TraceFormatError(path, 1, "file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise TraceFormatError(path, line, "binary data (NUL byte); expected a CSV or JSON text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TraceFormatError(path, line, "binary data (not UTF-8 text); expected CSV or JSON") from None
    return text


def _is_preamble(line):
    """Lines that tools print before (or between) CSV rows: ncu's ==PROF==, nsys's progress."""
    s = line.strip()
    return (not s or s.startswith("==") or s.startswith("Generating ") or s.startswith("Processing [")
            or s.startswith("** ") or s.startswith("NOTICE:") or s.startswith("WARNING:"))


def _lines(text):
    # Only real line breaks: kernel names never hold them, but may hold other odd characters.
    return re.split(r"\r?\n", text)


def _split(line):
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return []


class _Table:
    """A CSV table: header, rows and the line number where each row starts."""

    def __init__(self, path, header, header_line, rows, lines):
        self.path = path
        self.header = header
        self.header_line = header_line
        self.rows = rows
        self.lines = lines
        self.index = {}
        for i, name in enumerate(header):
            self.index.setdefault(name.strip().lower(), i)

    def has(self, *names):
        return any(n.lower() in self.index for n in names)

    def col(self, *names):
        """Raw strings of the first of ``names`` present (case-insensitive), else None."""
        for n in names:
            i = self.index.get(n.lower())
            if i is not None:
                return [r[i] if i < len(r) else "" for r in self.rows]
        return None

    def numbers(self, *names):
        """Floats of the first of ``names`` present, NaN for blanks, None if absent."""
        raw = self.col(*names)
        if raw is None:
            return None
        out = np.empty(len(raw), dtype="float64")
        for k, text in enumerate(raw):
            v = parse_number(text)
            if v is None:
                raise TraceFormatError(self.path, self.lines[k],
                                       f"column {names[0]!r}: {text!r} is not a number")
            out[k] = v
        return out

    def ints(self, *names):
        """Like numbers(), but exact for 64-bit integers such as nanosecond timestamps."""
        raw = self.col(*names)
        if raw is None:
            return None
        out = []
        for k, text in enumerate(raw):
            s = str(text).strip().replace(",", "")
            if s == "" or s.lower() in ("n/a", "nan"):
                out.append(pd.NA)
                continue
            try:
                out.append(int(s))
            except ValueError:
                v = parse_number(s)
                if v is None or math.isnan(v):
                    raise TraceFormatError(self.path, self.lines[k],
                                           f"column {names[0]!r}: {text!r} is not an integer") from None
                out.append(int(round(v)))
        return pd.array(out, dtype="Int64")


def _find_header(path, lines, is_header):
    """Index of the first line whose fields satisfy ``is_header``, skipping tool preambles."""
    first_content = None
    for i, line in enumerate(lines[:_HEADER_SCAN_LINES]):
        if _is_preamble(line):
            continue
        if first_content is None:
            first_content = i
        if is_header([f.strip() for f in _split(line)]):
            return i
    if first_content is None:
        raise TraceFormatError(path, 1, "no CSV header found (only tool messages or blank lines)")
    return None


def _read_csv(path, required, text=None, ragged=False, what="this format"):
    """Parse ``path`` as CSV whose header holds every group in ``required``.

    ``required`` is a list of alternatives per needed column, e.g. [("Kernel_Name",), ...].
    Rows with the wrong number of fields are errors unless ``ragged`` (ncu details pages).
    """
    text = _read_text(path) if text is None else text
    lines = _lines(text)

    def ok(fields):
        low = {f.lower() for f in fields}
        return all(any(a.lower() in low for a in alts) for alts in required)

    h = _find_header(path, lines, ok)
    if h is None:
        first = next(i for i, line in enumerate(lines) if not _is_preamble(line))
        have = [f.strip() for f in _split(lines[first])]
        missing = [alts[0] for alts in required
                   if not any(a.lower() in {x.lower() for x in have} for a in alts)]
        raise TraceFormatError(path, first + 1,
                               f"not {what}: missing column(s) {', '.join(missing)}; "
                               f"header has {', '.join(have[:12]) or 'nothing'}")
    header = [f.strip() for f in _split(lines[h])]
    reader = csv.reader(_LineFeeder(lines, h + 1), strict=True)
    rows, row_lines = [], []
    try:
        while True:
            line_no = h + 2 + reader.line_num     # 1-based line where the next record starts
            try:
                fields = next(reader)
            except StopIteration:
                break
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) == 1 and _is_preamble(fields[0]):
                continue
            if len(fields) != len(header):
                if not ragged:
                    raise TraceFormatError(
                        path, line_no,
                        f"{len(fields)} fields where the header (line {h + 1}) has {len(header)}"
                        f" (truncated file or wrong columns?)")
                fields = (fields + [""] * len(header))[:len(header)]
            rows.append(fields)
            row_lines.append(line_no)
    except csv.Error as exc:
        raise TraceFormatError(path, h + 1 + reader.line_num, f"malformed CSV ({exc})") from None
    return _Table(str(path), header, h + 1, rows, row_lines)


class _LineFeeder:
    """Feeds csv.reader the lines after the header so reader.line_num counts file lines."""

    def __init__(self, lines, start):
        self._it = iter(lines[start:])

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it) + "\n"


# --------------------------------------------------------------------------------------------
# Building schema frames
# --------------------------------------------------------------------------------------------

def _frame(columns, n, tool, extras=None):
    """A DataFrame in the schema from a dict of column -> values (missing ones are NA)."""
    data = {}
    for name, dtype in SCHEMA.items():
        values = columns.get(name)
        if values is None:
            values = [pd.NA] * n if dtype != "float64" else np.full(n, np.nan)
        if dtype == "Int64":
            data[name] = _to_int64(values)
        elif dtype == "float64":
            data[name] = pd.array(values, dtype="Float64").astype("float64") \
                if not isinstance(values, np.ndarray) else values.astype("float64")
        else:
            data[name] = pd.Series(list(values), dtype="object")
    df = pd.DataFrame(data)
    if columns.get("short_name") is None:
        df["short_name"] = [short_kernel_name(k) for k in df["kernel_name"]]
    df["source_tool"] = tool
    if columns.get("calls") is None:
        df["calls"] = pd.array([1] * n, dtype="Int64")
    if columns.get("duration_ns") is None:
        df["duration_ns"] = (df["end_ns"] - df["start_ns"]).astype("Float64").astype("float64")
    for name in ("short_name", "source_tool"):
        df[name] = pd.Series(list(df[name]), dtype="object")
    extra = {name: values for name, values in (extras or {}).items() if name not in df.columns}
    if extra:
        # One concat instead of many inserts: an ncu raw page brings ~100 metric columns.
        df = pd.concat([df, pd.DataFrame(extra, index=df.index)], axis=1)
    return df


def _to_int64(values):
    if isinstance(values, pd.arrays.IntegerArray):
        return values
    arr = np.asarray(values, dtype="object")
    out = []
    for v in arr:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            out.append(pd.NA)
        else:
            out.append(int(round(float(v))))
    return pd.array(out, dtype="Int64")


def _ceil_div(num, den):
    """Workgroups from work-items: rocprof's grid sizes count work-items, the schema blocks."""
    if num is None or den is None:
        return None
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, np.ceil(num / den), np.nan)
    return out


def _text(values):
    """Identifiers (agent, stream) as strings: "2", "Agent 4", "GPU 3" stay recognisable."""
    if values is None:
        return None
    out = []
    for v in values:
        s = str(v).strip()
        if s.endswith(".0") and s[:-2].isdigit():
            s = s[:-2]
        out.append(s if s else None)
    return out


def _numeric_extras(table, skip):
    """Every column not in ``skip`` as a float column (counters); non-numeric ones as text."""
    skip = {s.lower() for s in skip}
    extras = {}
    for name in table.header:
        if not name or name.lower() in skip:
            continue
        raw = table.col(name)
        values = [parse_number(x) for x in raw]
        if all(v is not None for v in values):
            extras[name] = np.array(values, dtype="float64")
        else:
            extras[name] = raw
    return extras


# --------------------------------------------------------------------------------------------
# rocprofv3
# --------------------------------------------------------------------------------------------

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


def _read_kernel_stats(path, what):
    t = _read_csv(path, [("Name", "KernelName"), ("Calls",), ("TotalDurationNs",)], what=what)
    tool = "rocprofv3" if t.has("MinNs", "MaxNs", "StdDev") else "rocprof"
    cols = {"kernel_name": t.col("Name", "KernelName"),
            "calls": t.numbers("Calls"),
            "duration_ns": t.numbers("TotalDurationNs")}
    extras = {}
    for src, dst in (("AverageNs", "avg_ns"), ("MinNs", "min_ns"), ("MaxNs", "max_ns"),
                     ("StdDev", "stddev_ns"), ("Percentage", "tool_percent")):
        if t.has(src):
            extras[dst] = t.numbers(src)
    return _frame(cols, len(t.rows), tool, extras)


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


# --------------------------------------------------------------------------------------------
# legacy rocprof
# --------------------------------------------------------------------------------------------

_ROCPROF_KNOWN = ["Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid", "grd",
                  "wgr", "lds", "scr", "arch_vgpr", "accum_vgpr", "vgpr", "sgpr", "fbar",
                  "wave_size", "sig", "obj", "DispatchNs", "BeginNs", "EndNs", "CompleteNs",
                  "DurationNs"]


def read_rocprof_results(path):
    """Legacy rocprof ``results.csv`` -> one row per dispatch; counter columns are kept."""
    t = _read_csv(path, [("KernelName",), ("BeginNs",), ("EndNs",)], what="a rocprof results.csv")
    vgpr = t.numbers("arch_vgpr", "vgpr")
    if vgpr is not None and t.has("accum_vgpr"):
        vgpr = vgpr + np.nan_to_num(t.numbers("accum_vgpr"))
    cols = {
        "kernel_name": t.col("KernelName"),
        "start_ns": t.ints("BeginNs"),
        "end_ns": t.ints("EndNs"),
        "grid_x": _ceil_div(t.numbers("grd"), t.numbers("wgr")),
        "block_x": t.numbers("wgr"),
        "registers": vgpr,
        "shared_mem_bytes": t.numbers("lds"),
        "device": _text(t.col("gpu-id")),
        "stream": _text(t.col("queue-id")),
        "pid": t.ints("pid"),
    }
    if t.has("grd"):
        cols["grid_y"] = cols["grid_z"] = cols["block_y"] = cols["block_z"] = [1] * len(t.rows)
    extras = {}
    if t.has("Index"):
        extras["dispatch_id"] = t.ints("Index")
    extras.update(_numeric_extras(t, _ROCPROF_KNOWN))
    return _frame(cols, len(t.rows), "rocprof", extras)


def read_rocprof_stats(path):
    """Legacy rocprof ``results.stats.csv`` -> one row per kernel (calls, total duration_ns)."""
    return _read_kernel_stats(path, "a rocprof results.stats.csv")


# --------------------------------------------------------------------------------------------
# Nsight Compute
# --------------------------------------------------------------------------------------------

# Columns that describe the whole device rather than the launch; left out to keep frames small.
_NCU_DEVICE_PREFIXES = ("device__attribute_", "nvlink__", "numa__", "c2clink__")


def _triple(text):
    """ncu's "(256, 1, 1)" -> (256, 1, 1); anything else -> (NaN, NaN, NaN)."""
    nums = re.findall(r"\d[\d,]*", str(text or ""))
    if len(nums) != 3:
        return (np.nan, np.nan, np.nan)
    return tuple(float(n.replace(",", "")) for n in nums)


def _ncu_launch_columns(kernel, grid, block, device, stream, ids):
    grids = [_triple(g) for g in grid] if grid is not None else None
    blocks = [_triple(b) for b in block] if block is not None else None
    cols = {"kernel_name": kernel, "device": _text(device), "stream": _text(stream),
            "correlation_id": ids}
    for k, axis in enumerate("xyz"):
        if grids is not None:
            cols[f"grid_{axis}"] = [g[k] for g in grids]
        if blocks is not None:
            cols[f"block_{axis}"] = [b[k] for b in blocks]
    return cols


def read_ncu_raw(path, text=None):
    """ncu ``--csv --page raw`` (wide; optional units row) -> one row per launch.

    Every metric column is converted to base units (bytes, ns, byte/second, ...);
    gpu__time_duration.sum becomes ``duration_ns``.
    """
    t = _read_csv(path, [("Kernel Name",), ("ID",)], text=text, what="an ncu raw-page CSV")
    units = [""] * len(t.header)
    if t.rows and not t.rows[0][t.index["id"]].strip():
        units = t.rows[0]
        t.rows, t.lines = t.rows[1:], t.lines[1:]
    n = len(t.rows)
    values = {}
    for j, name in enumerate(t.header):
        if "__" not in name or name.startswith(_NCU_DEVICE_PREFIXES):
            continue
        factor, _ = unit_scale(units[j])
        raw = [r[j] for r in t.rows]
        nums = [parse_number(x) for x in raw]
        if all(v is not None for v in nums):
            values[name] = np.array(nums, dtype="float64") * factor
        else:
            values[name] = raw
    cols = _ncu_launch_columns(t.col("Kernel Name"), t.col("Grid Size"), t.col("Block Size"),
                               t.col("Device"), t.col("Stream"), t.ints("ID"))
    cols["pid"] = t.ints("Process ID")
    if "gpu__time_duration.sum" in values:
        cols["duration_ns"] = values["gpu__time_duration.sum"]
    if "launch__registers_per_thread" in values:
        cols["registers"] = values["launch__registers_per_thread"]
    static = values.get("launch__shared_mem_per_block_static")
    dynamic = values.get("launch__shared_mem_per_block_dynamic")
    if isinstance(static, np.ndarray) and isinstance(dynamic, np.ndarray):
        cols["shared_mem_bytes"] = np.nan_to_num(static) + np.nan_to_num(dynamic)
    for axis in "xyz":
        for kind, metric in (("grid", "launch__grid_dim_"), ("block", "launch__block_dim_")):
            if cols.get(f"{kind}_{axis}") is None and metric + axis in values:
                cols[f"{kind}_{axis}"] = values[metric + axis]
    return _frame(cols, n, "ncu", values)


# Details-page metric names that fill schema columns.
_NCU_DETAIL_SCHEMA = {"Duration": "duration_ns", "Registers Per Thread": "registers"}


def read_ncu_details(path, text=None):
    """ncu ``--csv`` details page (long: one row per metric) -> one row per launch.

    Metric columns are named after "Metric Name" in base units; a name that appears in two
    sections becomes "Section / Metric". Rule rows (new versions) go to ``df.attrs["rules"]``,
    a list of dicts.
    """
    t = _read_csv(path, [("Kernel Name",), ("Metric Name",), ("Metric Value",)], text=text,
                  ragged=True, what="an ncu details-page CSV")
    ids = t.col("ID") or [None] * len(t.rows)
    kernels = t.col("Kernel Name")
    sections = t.col("Section Name") or [""] * len(t.rows)
    metrics = t.col("Metric Name")
    units = t.col("Metric Unit") or [""] * len(t.rows)
    vals = t.col("Metric Value")
    rule_names = t.col("Rule Name")
    # A launch is one ID; files without IDs are split where the kernel name changes.
    keys, last = [], None
    for i in range(len(t.rows)):
        if ids[i] is not None and ids[i].strip():
            keys.append(ids[i].strip())
        else:
            if last is None or kernels[i] != kernels[last]:
                keys.append(f"row{i}")
            else:
                keys.append(keys[-1])
            last = i
    sections_of = {}
    for s, m in zip(sections, metrics):
        if m.strip():
            sections_of.setdefault(m.strip(), set()).add(s.strip())
    first, table, order, rules = {}, {}, [], []
    for i, key in enumerate(keys):
        if key not in first:
            first[key] = i
            order.append(key)
            table[key] = {}
        m = metrics[i].strip()
        if not m:
            if rule_names is not None and rule_names[i].strip():
                rules.append({"launch": key, "kernel_name": kernels[i], "section": sections[i],
                              "rule": rule_names[i],
                              "type": (t.col("Rule Type") or [""] * len(t.rows))[i],
                              "description": (t.col("Rule Description") or [""] * len(t.rows))[i],
                              "estimated_speedup": parse_number(
                                  (t.col("Estimated Speedup") or [""] * len(t.rows))[i])})
            continue
        name = m if len(sections_of[m]) == 1 else f"{sections[i].strip()} / {m}"
        value, _ = to_base(vals[i], units[i])
        table[key][name] = vals[i] if value is None else value
    picked = [first[k] for k in order]
    pick = (lambda col: [col[i] for i in picked] if col is not None else None)
    id_ints = [int(k) if k.isdigit() else pd.NA for k in order]
    cols = _ncu_launch_columns(pick(kernels), pick(t.col("Grid Size")), pick(t.col("Block Size")),
                               pick(t.col("Device")), pick(t.col("Stream")), id_ints)
    pids = pick(t.col("Process ID"))
    cols["pid"] = [parse_number(x) for x in pids] if pids is not None else None
    names = list(dict.fromkeys(n for k in order for n in table[k]))
    extras = {}
    for name in names:
        column = [table[k].get(name, np.nan) for k in order]
        numeric = all(isinstance(v, float) for v in column)
        extras[name] = np.array(column, dtype="float64") if numeric else column
    for metric, target in _NCU_DETAIL_SCHEMA.items():
        if isinstance(extras.get(metric), np.ndarray):
            cols[target] = extras[metric]
    static = extras.get("Static Shared Memory Per Block")
    dynamic = extras.get("Dynamic Shared Memory Per Block")
    if isinstance(static, np.ndarray) and isinstance(dynamic, np.ndarray):
        cols["shared_mem_bytes"] = np.nan_to_num(static) + np.nan_to_num(dynamic)
    df = _frame(cols, len(order), "ncu", extras)
    # A list of dicts, not a DataFrame: pandas compares attrs when combining frames.
    df.attrs["rules"] = rules
    return df


def read_ncu(path):
    """Any ncu ``--csv`` output (raw or details page), format chosen from the header."""
    text = _read_text(path)
    fmt = _detect_from_text(path, text)
    if fmt == "ncu_details":
        return read_ncu_details(path, text=text)
    if fmt == "ncu_raw":
        return read_ncu_raw(path, text=text)
    raise TraceFormatError(path, None, f"not an Nsight Compute CSV (looks like {fmt})")


# --------------------------------------------------------------------------------------------
# Nsight Systems
# --------------------------------------------------------------------------------------------

def read_nsys_kern_sum(path):
    """nsys ``stats --report cuda_gpu_kern_sum --format csv`` -> one row per kernel."""
    t = _read_csv(path, [("Name",), ("Total Time (ns)", "Total Time"), ("Instances",)],
                  what="an nsys cuda_gpu_kern_sum CSV")
    cols = {"kernel_name": t.col("Name"), "calls": t.numbers("Instances"),
            "duration_ns": t.numbers("Total Time (ns)", "Total Time")}
    extras = {}
    for names, dst in ((("Avg (ns)", "Average (ns)", "Average"), "avg_ns"),
                       (("Med (ns)", "Median (ns)"), "median_ns"),
                       (("Min (ns)", "Minimum (ns)", "Minimum"), "min_ns"),
                       (("Max (ns)", "Maximum (ns)", "Maximum"), "max_ns"),
                       (("StdDev (ns)",), "stddev_ns"),
                       (("Time (%)", "Time(%)"), "tool_percent")):
        if t.has(*names):
            extras[dst] = t.numbers(*names)
    return _frame(cols, len(t.rows), "nsys", extras)


# --------------------------------------------------------------------------------------------
# PyTorch profiler (Chrome trace JSON)
# --------------------------------------------------------------------------------------------

# Event categories that are GPU work; copies and fills count as GPU time too.
_TORCH_GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def read_pytorch_trace(path):
    """PyTorch profiler Chrome trace (``.json`` or ``.json.gz``) -> one row per GPU event.

    Kernel, gpu_memcpy and gpu_memset events; ``ts``/``dur`` are microseconds in the file.
    """
    text = _read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, exc.lineno,
                               f"malformed JSON ({exc.msg}, column {exc.colno})") from None
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


# --------------------------------------------------------------------------------------------
# Detection and the front door
# --------------------------------------------------------------------------------------------

def _signature(fields):
    """The format a header line belongs to, or None."""
    low = {f.lower() for f in fields}
    has = low.__contains__
    if has("node_id") and has("agent_type"):
        return "rocprofv3_agent_info"
    if has("kernel_name") and has("counter_name") and has("counter_value"):
        return "rocprofv3_counter_collection"
    if has("kernel_name") and has("start_timestamp") and has("end_timestamp"):
        return "rocprofv3_kernel_trace"
    if (has("name") or has("kernelname")) and has("calls") and has("totaldurationns"):
        if has("minns") or has("maxns") or has("stddev"):
            return "rocprofv3_kernel_stats"
        return "rocprof_stats"
    if has("kernelname") and has("beginns") and has("endns"):
        return "rocprof_results"
    if has("kernel name") and has("metric name") and has("metric value"):
        return "ncu_details"
    if has("kernel name") and has("id") and any("__" in f for f in low):
        return "ncu_raw"
    if has("name") and has("instances") and (has("total time (ns)") or has("total time")):
        return "nsys_kern_sum"
    return None


def _detect_from_text(path, text):
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        return "rocprofv3_json" if _formats.is_rocprofv3_json(stripped) else "pytorch_trace"
    lines = _lines(text)
    h = _find_header(path, lines, lambda f: _signature(f) is not None)
    if h is None:
        first = next(i for i, line in enumerate(lines) if not _is_preamble(line))
        shown = ", ".join(f.strip() for f in _split(lines[first])[:8]) or lines[first][:60]
        raise TraceFormatError(path, first + 1,
                               "unrecognised header (not a rocprofv3, rocprof, ncu, nsys or PyTorch"
                               f" output): {shown}")
    return _signature([f.strip() for f in _split(lines[h])])


def detect_format(path):
    """Which profiler output ``path`` is, e.g. "rocprofv3_kernel_trace", "ncu_raw", "rocpd"."""
    return _formats.sniff(path) or _detect_from_text(path, _read_text(path))


READERS = {
    "rocprofv3_kernel_trace": read_rocprofv3_kernel_trace,
    "rocprofv3_counter_collection": read_rocprofv3_counter_collection,
    "rocprofv3_kernel_stats": read_rocprofv3_kernel_stats,
    "rocprof_results": read_rocprof_results,
    "rocprof_stats": read_rocprof_stats,
    "ncu_raw": read_ncu_raw,
    "ncu_details": read_ncu_details,
    "nsys_kern_sum": read_nsys_kern_sum,
    "pytorch_trace": read_pytorch_trace,
}
READERS.update(_formats.READERS)    # databases, Nsight reports, rocprofv3 JSON (formats.py)

# Formats with one row per dispatch are preferred over summaries when a folder holds both.
_PER_DISPATCH = {"rocprofv3_kernel_trace", "rocprofv3_counter_collection", "rocprof_results",
                 "ncu_raw", "ncu_details", "pytorch_trace"} | _formats.PER_DISPATCH


def read(path):
    """Read any supported profiler output (format detected) into the kernel-trace schema.

    ``path`` may also be a folder written by a profiler run; see read_dir().
    """
    p = Path(path)
    if p.is_dir():
        return read_dir(p)
    fmt = detect_format(p)
    if fmt == "rocprofv3_agent_info":
        raise TraceFormatError(p, 1, "a rocprofv3 agent_info.csv describes devices, not kernels;"
                                     " read it with read_agent_info()")
    return READERS[fmt](p)


def read_dir(path):
    """Every kernel trace under a profiler output folder, concatenated.

    rocprofv3 writes kernel_trace, counter_collection, stats and agent_info files side by
    side; per-dispatch files win over summaries, and counter columns are joined onto the
    kernel trace by correlation id when both exist.
    """
    root = Path(path)
    found = {}
    for f in sorted(root.rglob("*")):
        suffixes = (".csv", ".json", ".json.gz", ".txt") + _formats.SUFFIXES
        if not f.is_file() or not f.name.endswith(suffixes):
            continue
        try:
            fmt = detect_format(f)
        except TraceFormatError:
            continue                            # other tool outputs: API traces, logs
        if fmt != "rocprofv3_agent_info":
            found.setdefault(fmt, []).append(f)
    if not found:
        raise TraceFormatError(root, None, "no kernel trace found in this folder")
    found = _formats.prefer(found)
    per_dispatch = [fmt for fmt in found if fmt in _PER_DISPATCH]
    frames = []
    if "rocprofv3_kernel_trace" in found:
        trace = pd.concat([read_rocprofv3_kernel_trace(f) for f in found["rocprofv3_kernel_trace"]],
                          ignore_index=True)
        if "rocprofv3_counter_collection" in found:
            counters = pd.concat([read_rocprofv3_counter_collection(f)
                                  for f in found["rocprofv3_counter_collection"]], ignore_index=True)
            extra = [c for c in counters.columns if c not in trace.columns]
            if extra and counters["correlation_id"].notna().all():
                trace = trace.merge(counters[["correlation_id"] + extra], on="correlation_id", how="left")
        frames.append(trace)
        per_dispatch = [f for f in per_dispatch
                        if f not in ("rocprofv3_kernel_trace", "rocprofv3_counter_collection")]
    for fmt in (per_dispatch if (per_dispatch or frames) else list(found)):
        frames.extend(READERS[fmt](f) for f in found[fmt])
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


__all__ = ["SCHEMA", "SCHEMA_COLUMNS", "read", "read_dir", "detect_format", "read_agent_info",
           "read_rocprofv3_kernel_trace", "read_rocprofv3_counter_collection",
           "read_rocprofv3_kernel_stats", "read_rocprof_results", "read_rocprof_stats",
           "read_ncu", "read_ncu_raw", "read_ncu_details", "read_nsys_kern_sum",
           "read_pytorch_trace", "TraceFormatError"]
