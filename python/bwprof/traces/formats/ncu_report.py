"""Nsight Compute reports (``.ncu-rep``): through the ``ncu`` command line's CSV export, or through
NVIDIA's ``ncu_report`` Python module in a child process.

Two ways, ``via=``:

- ``"cli"``: ``ncu --import R.ncu-rep --csv --page raw --print-units base``, read by the raw-page
  CSV reader (read_ncu_raw). NVIDIA's own export: the most reliable where ``ncu`` is installed.
- ``"module"``: ``ncu_report`` (shipped in ``<install>/extras/python``; looked for in
  ``$BWPROF_NCU_REPORT_PATH``, beside the ``ncu`` found on PATH, under the usual install folders,
  then on ``sys.path``), run in a child process (ncu_report_child.py): the module has crashed
  Python with a segmentation fault (Nsight Compute 2025.3.1, Python 3.12), and a crash must end
  the child, not the user's process. A child that dies or fails becomes a TraceFormatError that
  says where it stopped and how to export CSV instead.
- ``"auto"`` (default): the command line when ``ncu`` is on PATH, else the module; when the
  command line fails the module is tried, and the error names both.

Either way the frame has the columns of the ``--csv --page raw`` reader: every launch metric
and counter under its own name in base units (bytes, ns, per second, Hz), device attributes
left out, ``gpu__time_duration.sum`` as ``duration_ns``, and the launch's grid, block, registers
and shared memory in the schema columns. ``correlation_id`` is the result's position in the
report, as ncu's CSV "ID".
"""

import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import TraceFormatError
from ..table import Origin, reader, schema_frame
from ..units import unit_scale
from . import ncu_report_child as child
from .ncu import read_ncu_raw
from .ncu_report_child import candidate_dirs, find_ncu_report, locate_ncu_report  # noqa: F401

TOOL = "ncu"
VIAS = ("auto", "cli", "module")
# Seconds a child reading a report, or ncu exporting one, may take.
TIMEOUT_S = 600


def _export_hint(p):
    return f"export it as CSV instead: ncu --import {p.name} --csv --page raw --print-units base > {p.stem}.csv"


def _no_module(p, why=""):
    looked = ", ".join(candidate_dirs()[:4]) or "no Nsight Compute install found"
    return TraceFormatError(p, None, "reading a .ncu-rep needs NVIDIA's ncu_report module from "
                                     f"Nsight Compute's extras/python (looked in: {looked}; set "
                                     "BWPROF_NCU_REPORT_PATH) or the ncu command on PATH; "
                                     f"{why}or export CSV: ncu --import {p.name} --csv --page raw "
                                     f"> {p.stem}.csv")


@reader
def read_ncu_rep(path, module=None, via="auto", ncu=None, timeout=TIMEOUT_S):
    """Nsight Compute report -> one row per profiled launch, columns as read_ncu_raw().

    ``via``: "auto" (default), "cli" (``ncu --import ... --csv --page raw``) or "module"
    (NVIDIA's ncu_report in a child process); see the module's docstring. ``module``: an
    ncu_report-like module object to use in this process instead (for stand-ins). ``ncu``:
    the ncu executable (default: the one on PATH). ``timeout``: seconds for the export or
    the child.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if via not in VIAS:
        raise ValueError(f"via must be one of {', '.join(VIAS)}, not {via!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if module is not None:
        return _frame(p, _extract_here(p, module))
    exe = ncu or shutil.which("ncu")
    if via == "cli":
        if exe is None:
            raise TraceFormatError(p, None, "via='cli' needs Nsight Compute's ncu on PATH (or ncu=...); "
                                            "use via='module' for NVIDIA's ncu_report module")
        return _via_cli(p, exe, timeout)
    if via == "module":
        return _frame(p, _via_child(p, timeout))
    # auto
    cli_error = None
    if exe is not None:
        try:
            return _via_cli(p, exe, timeout)
        except TraceFormatError as exc:
            cli_error = exc.reason
    if locate_ncu_report() is None:
        raise _no_module(p, f"{cli_error}; " if cli_error else "")
    try:
        return _frame(p, _via_child(p, timeout))
    except TraceFormatError as exc:
        if cli_error is None:
            raise
        raise TraceFormatError(p, None, f"{cli_error}; and through ncu_report: {exc.reason}") from None


def _via_cli(p, exe, timeout):
    cmd = [str(exe), "--import", str(p), "--csv", "--page", "raw", "--print-units", "base"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TraceFormatError(p, None, f"ncu --import took more than {timeout} s") from None
    except OSError as exc:
        raise TraceFormatError(p, None, f"cannot run {exe} ({exc})") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = " ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-2:])
        how = _signal_text(proc.returncode) if proc.returncode < 0 else f"exit {proc.returncode}"
        raise TraceFormatError(p, None, f"ncu --import failed ({how}): {tail or 'no output'}")
    return read_ncu_raw(p, text=proc.stdout)


def _signal_text(code):
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def _via_child(p, timeout):
    """The report's rows, read by ncu_report_child.py in a child process."""
    env = dict(os.environ)
    env["BWPROF_NCU_CHILD_SYS_PATH"] = os.pathsep.join(x for x in sys.path if x)
    with tempfile.TemporaryDirectory(prefix="bwprof_ncu_") as tmp:
        out = os.path.join(tmp, "rows.pickle")
        cmd = [sys.executable, child.__file__, str(p), out]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise TraceFormatError(p, None, f"ncu_report took more than {timeout} s to read it; "
                                            f"{_export_hint(p)}") from None
        stages = [line[len("stage: "):] for line in (proc.stderr or "").splitlines()
                  if line.startswith("stage: ")]
        where = f" at {stages[-1]}" if stages else ""
        if proc.returncode < 0:
            raise TraceFormatError(p, None, f"NVIDIA's ncu_report module crashed ({_signal_text(proc.returncode)}"
                                            f"{where}) while reading the report in a child process; "
                                            f"this process is fine. {_export_hint(p)}, or read it "
                                            "with via='cli' where ncu is installed")
        if proc.returncode == 4:
            raise _no_module(p)
        result = None
        if os.path.exists(out):
            try:
                with open(out, "rb") as f:
                    result = pickle.load(f)
            except (OSError, EOFError, pickle.UnpicklingError):
                result = None
        if proc.returncode == 3 and isinstance(result, dict) and "error" in result:
            if result["error"] == "load":
                raise TraceFormatError(p, None, f"ncu_report cannot load it ({result['detail']})")
            raise TraceFormatError(p, None, f"ncu_report failed while reading results ({result['detail']})")
        if proc.returncode != 0 or not isinstance(result, dict) or "rows" not in result:
            tail = " ".join((proc.stderr or "").strip().splitlines()[-2:])
            raise TraceFormatError(p, None, f"the ncu_report child failed (exit {proc.returncode}{where}): "
                                            f"{tail or 'no output'}; {_export_hint(p)}")
        return result["rows"]


def _extract_here(p, module):
    try:
        return child.extract(module, p)
    except child.LoadError as exc:
        raise TraceFormatError(p, None, f"ncu_report cannot load it ({exc})") from None
    except child.ReadError as exc:
        raise TraceFormatError(p, None, f"ncu_report failed while reading results ({exc})") from None


def _frame(p, rows):
    """The schema frame of the report's [(kernel name, {metric: (value, unit)})]."""
    names = list(dict.fromkeys(k for _, metrics in rows for k in metrics))
    n = len(rows)
    metrics = {}
    for name in names:
        column = []
        for _, values in rows:
            value, unit = values.get(name, (None, ""))
            if isinstance(value, float):
                value = value * unit_scale(unit or "")[0]
            column.append(value)
        if all(v is None or isinstance(v, float) for v in column):
            metrics[name] = np.array([np.nan if v is None else v for v in column], dtype=np.float64)
        else:
            metrics[name] = np.array(column, dtype=object)

    def num(name):
        col = metrics.get(name)
        return col if isinstance(col, np.ndarray) and col.dtype == np.float64 else None

    cols = {"kernel_name": np.array([name for name, _ in rows], dtype=object),
            "correlation_id": pd.array(list(range(n)), dtype="Int64")}
    if num("gpu__time_duration.sum") is not None:
        cols["duration_ns"] = num("gpu__time_duration.sum")
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
            cols[target] = np.array([str(int(v)) if np.isfinite(v) else None for v in col], dtype=object)
    origin = Origin(p, "result {}", lambda picked: list(picked))
    return schema_frame(cols, n, TOOL, metrics, origin=origin)
