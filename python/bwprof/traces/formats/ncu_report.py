"""Nsight Compute reports (``.ncu-rep``) through NVIDIA's ``ncu_report`` Python module.

The module ships with Nsight Compute in ``<install>/extras/python``; it is looked for on
``sys.path``, then beside the ``ncu`` found on PATH, then under the usual install folders
(``/opt/nvidia/nsight-compute/*``, ``/usr/local/cuda*/nsight-compute*``). Its API: 
``load_report(path)`` gives a context of ranges, each range holds actions (one per profiled
kernel launch), and an action's metrics are read by name (``metric_by_name``), each with a
``value()`` and a ``unit()``.

The frame has the columns of the ``--csv --page raw`` reader (read_ncu_raw): every launch
metric and counter under its own name in base units (bytes, ns, per second, Hz), device
attributes left out, ``gpu__time_duration.sum`` as ``duration_ns``, and the launch's grid,
block, registers and shared memory in the schema columns. ``correlation_id`` is the result's
position in the report, as ncu's CSV "ID".
"""

import glob
import importlib
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import TraceFormatError
from ..sqlitedb import schema_frame
from ..units import unit_scale
from .ncu import _NCU_DEVICE_PREFIXES as _DEVICE_PREFIXES

TOOL = "ncu"


def candidate_dirs():
    """Folders that may hold ncu_report.py, most specific first."""
    dirs = []
    env = os.environ.get("BWPROF_NCU_REPORT_PATH")
    if env:
        dirs.extend(env.split(os.pathsep))
    ncu = shutil.which("ncu")
    if ncu:
        real = Path(os.path.realpath(ncu))
        for base in (real.parent, real.parent.parent):
            dirs.append(str(base / "extras" / "python"))
            dirs.extend(sorted(glob.glob(str(base / "nsight-compute*" / "extras" / "python")), reverse=True))
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python",
                    "/usr/local/cuda*/nsight-compute*/extras/python",
                    "/usr/local/NVIDIA-Nsight-Compute*/extras/python"):
        dirs.extend(sorted(glob.glob(pattern), reverse=True))
    return list(dict.fromkeys(dirs))


def find_ncu_report():
    """NVIDIA's ncu_report module, or None when no Nsight Compute install provides it."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for folder in candidate_dirs():
        if (Path(folder) / "ncu_report.py").exists():
            sys.path.insert(0, folder)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(folder)
    return None


def _value(metric):
    """A metric's value in base units: float, or str for text metrics, or None."""
    if metric is None:
        return None
    try:
        if hasattr(metric, "has_value") and not metric.has_value():
            return None
        value = metric.value()
    except Exception:                   # the module raises its own types for odd metrics
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    unit = metric.unit() if hasattr(metric, "unit") else ""
    factor, _ = unit_scale(unit or "")
    return number * factor


def _action_name(ncu_report, action):
    base = getattr(getattr(ncu_report, "IAction", None), "NameBase_DEMANGLED", None)
    if base is not None:
        try:
            return action.name(base)
        except TypeError:
            pass
    return action.name()


def _actions(context):
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            yield rng.action_by_idx(a)


def read_ncu_rep(path, module=None):
    """Nsight Compute report -> one row per profiled launch, columns as read_ncu_raw().

    ``module`` is the ncu_report module to use (found automatically when None).
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    ncu_report = module or find_ncu_report()
    if ncu_report is None:
        looked = ", ".join(candidate_dirs()[:4]) or "no Nsight Compute install found"
        raise TraceFormatError(p, None, "reading a .ncu-rep needs NVIDIA's ncu_report module from "
                                        f"Nsight Compute's extras/python (looked in: {looked}; set "
                                        "BWPROF_NCU_REPORT_PATH); or export CSV: ncu --import "
                                        f"{p.name} --csv --page raw > {p.stem}.csv")
    try:
        context = ncu_report.load_report(str(p))
    except Exception as exc:        # the module's own error types; a bad file must not escape
        raise TraceFormatError(p, None, f"ncu_report cannot load it ({exc})") from None
    names, rows = [], []
    try:
        for action in _actions(context):
            row = {"__name__": _action_name(ncu_report, action)}
            for metric_name in action.metric_names():
                if metric_name.startswith(_DEVICE_PREFIXES):
                    continue
                row[metric_name] = _value(action.metric_by_name(metric_name))
            rows.append(row)
    except TraceFormatError:
        raise
    except Exception as exc:
        raise TraceFormatError(p, None, f"ncu_report failed while reading results ({exc})") from None
    for row in rows:
        for k in row:
            if k != "__name__" and k not in names:
                names.append(k)
    n = len(rows)
    metrics = {}
    for name in names:
        column = [row.get(name) for row in rows]
        if all(v is None or isinstance(v, float) for v in column):
            metrics[name] = np.array([np.nan if v is None else v for v in column], dtype=np.float64)
        else:
            metrics[name] = np.array(column, dtype=object)

    def num(name):
        col = metrics.get(name)
        return col if isinstance(col, np.ndarray) and col.dtype == np.float64 else None

    cols = {"kernel_name": np.array([r["__name__"] for r in rows], dtype=object),
            "correlation_id": pd.array(list(range(n)), dtype="Int64")}
    if num("gpu__time_duration.sum") is not None:
        cols["duration_ns"] = num("gpu__time_duration.sum")
    else:
        cols["duration_ns"] = np.full(n, np.nan)
    for axis in "xyz":
        for kind, metric in (("grid", "launch__grid_dim_"), ("block", "launch__block_dim_")):
            if num(metric + axis) is not None:
                cols[f"{kind}_{axis}"] = num(metric + axis)
    if num("launch__registers_per_thread") is not None:
        cols["registers"] = num("launch__registers_per_thread")
    static, dynamic = num("launch__shared_mem_per_block_static"), num("launch__shared_mem_per_block_dynamic")
    if static is not None and dynamic is not None:
        cols["shared_mem_bytes"] = np.nan_to_num(static) + np.nan_to_num(dynamic)
    for target, metric in (("device", "launch__device_id"), ("stream", "launch__stream_id")):
        col = num(metric)
        if col is not None:
            cols[target] = np.array([None if np.isnan(v) else str(int(v)) for v in col], dtype=object)
    return schema_frame(cols, n, TOOL, metrics)
