"""Nsight Compute: ``--csv --page raw`` (wide) and the details page (long), any version."""

import re

import numpy as np
import pandas as pd

from ..detect import _detect_from_text
from ..errors import TraceFormatError
from ..csv_columns import _numbers_or_text, _text
from ..csv_table import _read_csv
from ..source import _read_text
from ..table import reader, schema_frame
from ..units import parse_number, to_base, unit_scale

# Columns that describe the whole device rather than the launch; left out to keep frames small
# (the same list for the .ncu-rep reader, which takes it from here).
from .ncu_report_child import DEVICE_PREFIXES as _NCU_DEVICE_PREFIXES  # noqa: E402


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


@reader
def read_ncu_raw(path, text=None):
    """ncu ``--csv --page raw`` (wide; optional units row) -> one row per launch.

    Every metric column is converted to base units (bytes, ns, byte/second, ...);
    gpu__time_duration.sum becomes ``duration_ns``.
    """
    t = _read_csv(path, [("Kernel Name",), ("ID",)], text=text, what="an ncu raw-page CSV")
    units = [""] * len(t.header)
    if t.n and not t.col("ID")[0].strip():
        units = [t.col(name)[0] if t.index.get(name.lower()) == j else ""
                 for j, name in enumerate(t.header)]
        t = t.take(np.arange(1, t.n))
    n = t.n
    values = {}
    for j, name in enumerate(t.header):
        if "__" not in name or name.startswith(_NCU_DEVICE_PREFIXES) or t.index.get(name.lower()) != j:
            continue
        factor, _ = unit_scale(units[j])
        raw = t.col(name)
        nums = _numbers_or_text(raw)
        values[name] = nums * factor if nums is not None else list(raw)
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
    return schema_frame(cols, n, "ncu", values, origin=t.origin())


# Details-page metric names that fill schema columns.
_NCU_DETAIL_SCHEMA = {"Duration": "duration_ns", "Registers Per Thread": "registers"}


@reader
def read_ncu_details(path, text=None):
    """ncu ``--csv`` details page (long: one row per metric) -> one row per launch.

    Metric columns are named after "Metric Name" in base units; a name that appears in two
    sections becomes "Section / Metric". Rule rows (new versions) go to ``df.attrs["rules"]``,
    a list of dicts.
    """
    t = _read_csv(path, [("Kernel Name",), ("Metric Name",), ("Metric Value",)], text=text,
                  ragged=True, what="an ncu details-page CSV")
    n_rows = t.n

    def strings(name, default=None):
        got = t.col(name)
        return list(got) if got is not None else ([default] * n_rows if default is not None or
                                                  name == "ID" else None)

    ids = strings("ID")
    kernels = strings("Kernel Name")
    sections = strings("Section Name", "")
    metrics = strings("Metric Name")
    units = strings("Metric Unit", "")
    vals = strings("Metric Value")
    rule_names = strings("Rule Name")
    rule_types = strings("Rule Type", "")
    rule_texts = strings("Rule Description", "")
    speedups = strings("Estimated Speedup", "")
    # A launch is one ID; files without IDs are split where the kernel name changes.
    keys, last = [], None
    for i in range(n_rows):
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
                              "type": rule_types[i], "description": rule_texts[i],
                              "estimated_speedup": parse_number(speedups[i])})
            continue
        name = m if len(sections_of[m]) == 1 else f"{sections[i].strip()} / {m}"
        value, _ = to_base(vals[i], units[i])
        table[key][name] = vals[i] if value is None else value
    picked = [first[k] for k in order]
    pick = (lambda col: [col[i] for i in picked] if col is not None else None)
    t = t.take(np.array(picked, dtype=np.int64))
    id_ints = [int(k) if k.isdigit() else pd.NA for k in order]
    cols = _ncu_launch_columns(pick(kernels), t.col("Grid Size"), t.col("Block Size"),
                               t.col("Device"), t.col("Stream"), id_ints)
    pids = t.col("Process ID")
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
    df = schema_frame(cols, len(order), "ncu", extras, origin=t.origin())
    # A list of dicts, not a DataFrame: pandas compares attrs when combining frames.
    df.attrs["rules"] = rules
    return df


@reader
def read_ncu(path):
    """Any ncu ``--csv`` output (raw or details page), format chosen from the header."""
    text = _read_text(path)
    fmt = _detect_from_text(path, text)
    if fmt == "ncu_details":
        return read_ncu_details(path, text=text)
    if fmt == "ncu_raw":
        return read_ncu_raw(path, text=text)
    raise TraceFormatError(path, None, f"not an Nsight Compute CSV (looks like {fmt})")
